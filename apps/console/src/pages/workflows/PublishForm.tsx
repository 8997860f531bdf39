import { useId, useRef, useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { placeProblems, textSpotOf, type ApiProblem, type PlacedProblems } from '../../api/problems.js';
import { FieldProblems, FormProblems } from '../../components/FieldProblems.js';
import { selectSpot, useFocusAfterRender } from '../../forms/select-spot.js';
import { PUBLISH_WORKFLOW, type PublishedVersion } from './operations.js';

const FIELDS = ['workflowId', 'name', 'definition'] as const;
type PublishField = (typeof FIELDS)[number];
type Problems = PlacedProblems<PublishField>;
const NONE: Problems = { summary: [], fields: {}, rest: [] };

/** What a publish did: the version, and whether it is new or the latest one (the same definition). */
export interface Published extends PublishedVersion {
  identical: boolean;
}

/**
 * Publishes a YAML (or JSON) definition as the next version of `workflowId`, or, without one, as
 * a new workflow whose id (and name) the form asks for. The API validates; each problem it lists
 * is shown under the field it concerns: the id, the name, or the definition (`edges[0].to`, or
 * `line 3, column 7` for a YAML syntax error, which moves the caret there when clicked).
 * `latestVersion` tells a new version from the latest one returned for an identical definition.
 */
export function PublishForm(props: { workflowId?: string; latestVersion?: number; initialDefinition: string; onPublished: (published: Published) => void }) {
  const creating = props.workflowId === undefined;
  const id = useId();
  const [workflowId, setWorkflowId] = useState(props.workflowId ?? '');
  const [name, setName] = useState('');
  const [definition, setDefinition] = useState(props.initialDefinition);
  const [problems, setProblems] = useState<Problems>(NONE);
  const editor = useRef<HTMLTextAreaElement>(null);
  const focusLater = useFocusAfterRender();
  const [state, publish] = useMutation<{ publishWorkflow: PublishedVersion }>(PUBLISH_WORKFLOW);

  const refuse = (field: PublishField, problem: ApiProblem) => {
    setProblems({ summary: [], fields: { [field]: [problem] }, rest: [] });
    focusLater({ element: document.getElementById(`${id}-${field}`) });
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const wid = workflowId.trim();
    if (!wid) return refuse('workflowId', { message: 'Enter the id of the new workflow, e.g. order-flow.' });
    if (!definition.trim()) return refuse('definition', { message: 'Enter the definition (YAML or JSON).' });
    setProblems(NONE);
    const result = await publish({ input: { workflowId: wid, definition, ...(creating && name.trim() ? { name: name.trim() } : {}) } });
    const published = result.data?.publishWorkflow;
    if (published) return props.onPublished({ ...published, identical: props.latestVersion !== undefined && published.version <= props.latestVersion });
    if (!result.error) return;
    const placed = placeProblems(result.error, (p) =>
      p.path === 'workflowId' ? (creating ? 'workflowId' : null) : p.path === 'name' ? (creating ? 'name' : null) : 'definition',
    );
    setProblems(placed);
    const first = FIELDS.find((f) => placed.fields[f]?.length);
    // A YAML syntax error puts the caret where the parser stopped.
    if (first)
      focusLater({ element: document.getElementById(`${id}-${first}`), at: first === 'definition' ? textSpotOf(placed.fields.definition![0]!) : null });
  };

  // When the API listed problems, they are the message: a one-line heading over the first
  // field's list, and no summary that would repeat them.
  const listed = FIELDS.reduce((n, f) => n + (problems.fields[f]?.length ?? 0), 0);
  const headed = FIELDS.find((f) => problems.fields[f]?.length);
  const heading = (field: PublishField) => (field === headed ? `Not published: ${listed} problem${listed === 1 ? '' : 's'} to fix.` : undefined);

  const described = (field: PublishField, hint: boolean) =>
    [problems.fields[field]?.length ? `${id}-${field}-problems` : '', hint ? `${id}-${field}-hint` : ''].filter(Boolean).join(' ') || undefined;

  return (
    <form className="publish-form" aria-label={creating ? 'New workflow' : `New version of ${props.workflowId}`} onSubmit={submit} noValidate>
      {creating && (
        <div className="form-fields">
          <div className="field" data-field="workflowId">
            <label htmlFor={`${id}-workflowId`}>Workflow id</label>
            <input
              id={`${id}-workflowId`}
              className="mono"
              value={workflowId}
              onChange={(e) => setWorkflowId(e.target.value)}
              maxLength={128}
              autoComplete="off"
              spellCheck={false}
              placeholder="order-flow"
              aria-invalid={problems.fields.workflowId?.length ? true : undefined}
              aria-describedby={described('workflowId', true)}
            />
            <span className="hint" id={`${id}-workflowId-hint`}>
              Letters, digits, <code>_ . : -</code>; it cannot change later.
            </span>
            <FieldProblems id={`${id}-workflowId-problems`} field="workflowId" problems={problems.fields.workflowId} heading={heading('workflowId')} />
          </div>
          <div className="field" data-field="name">
            <label htmlFor={`${id}-name`}>Name (optional)</label>
            <input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} maxLength={200} aria-describedby={described('name', false)} />
            <FieldProblems id={`${id}-name-problems`} field="name" problems={problems.fields.name} heading={heading('name')} />
          </div>
        </div>
      )}
      <div className="field" data-field="definition">
        <label htmlFor={`${id}-definition`}>Definition (YAML)</label>
        <textarea
          id={`${id}-definition`}
          ref={editor}
          className="definition-editor"
          value={definition}
          onChange={(e) => setDefinition(e.target.value)}
          spellCheck={false}
          autoCapitalize="off"
          autoCorrect="off"
          wrap="off"
          rows={24}
          aria-invalid={problems.fields.definition?.length ? true : undefined}
          aria-describedby={described('definition', true)}
        />
        <span className="hint" id={`${id}-definition-hint`}>
          <code>nodes</code> and <code>edges</code>, as <code>weft apply -f FILE</code> takes them. YAML or JSON; the API validates it.
        </span>
        <FieldProblems
          id={`${id}-definition-problems`}
          field="definition"
          problems={problems.fields.definition}
          locate={(line, column) => selectSpot(editor.current, line, column)}
          heading={heading('definition')}
        />
      </div>
      <div className="form-buttons">
        <button type="submit" disabled={state.fetching}>
          {creating ? 'Publish workflow' : 'Publish version'}
        </button>
      </div>
      <FormProblems summary={headed ? [] : problems.summary} rest={problems.rest} />
    </form>
  );
}
