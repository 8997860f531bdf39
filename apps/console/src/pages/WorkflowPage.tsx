/** Placeholder until the page is built. */
export function WorkflowPage() {
  return <h1>WorkflowPage</h1>;
}
