/** Placeholder until the page is built. */
export function QueuesPage() {
  return <h1>QueuesPage</h1>;
}
