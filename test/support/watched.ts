/** `spec` behind a proxy that records every key read from it: what a reader of specs really reads. */
export function watched<T extends object>(spec: T): { spec: T; read: Set<string> } {
  const read = new Set<string>();
  const proxy = new Proxy(spec, {
    get(target, key, receiver) {
      if (typeof key === 'string') read.add(key);
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { spec: proxy, read };
}
