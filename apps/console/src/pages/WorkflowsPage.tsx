/** Placeholder until the page is built. */
export function WorkflowsPage() {
  return <h1>WorkflowsPage</h1>;
}
