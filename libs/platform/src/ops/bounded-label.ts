/** The label value that stands for every value past a {@link BoundedLabel}'s limit. */
export const OTHER_LABEL = '_other';

/**
 * Keeps a label's cardinality bounded: the first `limit` distinct values are kept as they are,
 * later ones all become {@link OTHER_LABEL}, so a tenant publishing thousands of workflows cannot
 * make thousands of series. Values are cut to 128 characters.
 */
export class BoundedLabel {
  private readonly seen = new Set<string>();

  constructor(private readonly limit: number) {}

  /** `value` as the label value to use. */
  of(value: string): string {
    const v = value.length > 128 ? value.slice(0, 128) : value;
    if (this.seen.has(v)) return v;
    if (this.seen.size >= this.limit) return OTHER_LABEL;
    this.seen.add(v);
    return v;
  }
}
