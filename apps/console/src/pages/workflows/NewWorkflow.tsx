import { useId } from 'react';
import { useNavigate } from 'react-router';
import { PublishForm } from './PublishForm.js';
import { publishedState } from './PublishedNotice.js';

/** What the editor of a new workflow starts with: two CODE nodes and the edge between them. */
export const STARTER_DEFINITION = `# A workflow: nodes, and edges between them. Templates such as {{input.order_id}} read the run's input.
nodes:
  - node_id: greet
    type: CODE
    runtime: js
    spec:
      code: |
        function handler(input) {
          return { greeting: "hello " + input.who };
        }
      who: "{{input.who}}"

  - node_id: shout
    type: CODE
    runtime: js
    spec:
      code: |
        function handler(input) {
          return { loud: input.text.toUpperCase() };
        }
      text: "{{tasks.greet.output.greeting}}"

edges:
  - {from: greet, to: shout}
`;

/** The panel that publishes a new workflow (id, name, YAML) and opens its page once published. */
export function NewWorkflow() {
  const id = useId();
  const navigate = useNavigate();
  return (
    <section className="panel new-workflow" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>New workflow</h2>
      <PublishForm
        initialDefinition={STARTER_DEFINITION}
        onPublished={(published) =>
          navigate(`/workflows/${encodeURIComponent(published.workflowId)}?version=${published.version}`, { state: publishedState(published) })
        }
      />
    </section>
  );
}
