import { useId, useRef, useState, type FormEvent, type RefObject } from 'react';
import { useNavigate } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { byFirstSegment, placeProblems, type ApiProblem, type PlacedProblems } from '../../api/problems.js';
import { ErrorText } from '../../components/ErrorText.js';
import { FieldProblems, FormProblems } from '../../components/FieldProblems.js';
import { readJsonText } from '../../forms/json-text.js';
import { selectSpot, useFocusAfterRender } from '../../forms/select-spot.js';
import { WORKFLOW, WORKFLOWS, type WorkflowSummary, type WorkflowWithVersions } from '../workflows/operations.js';
import { START_FIELDS, START_RUN, type StartField } from './operations.js';

type Problems = PlacedProblems<StartField>;
const NONE: Problems = { summary: [], fields: {}, rest: [] };

/**
 * Starts a run of a workflow: its version (empty: the workflow's default), input and config as
 * JSON objects, and an optional idempotency key. The JSON is read before anything is sent: a
 * field that does not parse is named with the line and column, and the caret put there. What
 * the API refuses is shown at the field its path names (`input.$.order_id` under Input). A
 * started run opens its page.
 */
export function StartRunForm(props: { workflowId: string; version: string }) {
  const id = useId();
  const navigate = useNavigate();
  const [workflowId, setWorkflowId] = useState(props.workflowId);
  const [version, setVersion] = useState(props.version);
  const [input, setInput] = useState('{}');
  const [config, setConfig] = useState('{}');
  const [idempotencyKey, setIdempotencyKey] = useState('');
  const [problems, setProblems] = useState<Problems>(NONE);
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const configRef = useRef<HTMLTextAreaElement>(null);
  const focusLater = useFocusAfterRender();
  const [listed] = useQuery<{ workflows: WorkflowSummary[] }>({ query: WORKFLOWS });
  const [chosen] = useQuery<{ workflow: WorkflowWithVersions | null }>({ query: WORKFLOW, variables: { workflowId }, pause: !workflowId });
  const [started, start] = useMutation<{ startRun: { id: string } }>(START_RUN);
  const workflow = workflowId ? chosen.data?.workflow : undefined;
  const versions = workflow ? [...workflow.versions].sort((a, b) => b.version - a.version) : [];

  const refuse = (field: StartField, problem: ApiProblem, at?: { line: number; column: number } | null, ref?: HTMLTextAreaElement | null) => {
    setProblems({ summary: [], fields: { [field]: [problem] }, rest: [] });
    focusLater({ element: ref ?? document.getElementById(`${id}-${field}`), at });
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!workflowId) return refuse('workflowId', { message: 'Choose the workflow to run.' });
    const parsedInput = readJsonText('Input', input, { object: true });
    if (!parsedInput.ok) return refuse('input', { message: parsedInput.message }, parsedInput.at, inputRef.current);
    const parsedConfig = readJsonText('Config', config, { object: true });
    if (!parsedConfig.ok) return refuse('config', { message: parsedConfig.message }, parsedConfig.at, configRef.current);
    setProblems(NONE);
    const result = await start({
      input: {
        workflowId,
        ...(version ? { version: Number(version) } : {}),
        input: parsedInput.value,
        config: parsedConfig.value,
        ...(idempotencyKey.trim() ? { idempotencyKey: idempotencyKey.trim() } : {}),
      },
    });
    const runId = result.data?.startRun.id;
    if (runId) return navigate(`/runs/${encodeURIComponent(runId)}`);
    if (!result.error) return;
    const placed = placeProblems(result.error, byFirstSegment(START_FIELDS));
    setProblems(placed);
    const first = START_FIELDS.find((f) => placed.fields[f]?.length);
    if (first) focusLater({ element: document.getElementById(`${id}-${first}`) });
  };

  const field = (name: StartField, hinted = true) => {
    const listedHere = problems.fields[name];
    return {
      id: `${id}-${name}`,
      'aria-invalid': listedHere?.length ? true : undefined,
      'aria-describedby': [listedHere?.length ? `${id}-${name}-problems` : '', hinted ? `${id}-${name}-hint` : ''].filter(Boolean).join(' ') || undefined,
    } as const;
  };
  const problemsOf = (name: StartField, ref?: RefObject<HTMLTextAreaElement | null>) => (
    <FieldProblems
      id={`${id}-${name}-problems`}
      field={name}
      problems={problems.fields[name]}
      locate={ref ? (line, column) => selectSpot(ref.current, line, column) : undefined}
    />
  );

  return (
    <form className="panel publish-form" aria-labelledby={`${id}-title`} onSubmit={submit} noValidate>
      <h2 id={`${id}-title`}>Run details</h2>
      <div className="form-fields">
        <div className="field" data-field="workflowId">
          <label htmlFor={`${id}-workflowId`}>Workflow</label>
          <select
            {...field('workflowId', false)}
            value={workflowId}
            onChange={(e) => {
              setWorkflowId(e.target.value);
              setVersion('');
            }}
          >
            <option value="">{listed.data ? 'Choose a workflow' : 'Loading workflows…'}</option>
            {workflowId && listed.data && !listed.data.workflows.some((w) => w.id === workflowId) && <option value={workflowId}>{workflowId}</option>}
            {listed.data?.workflows.map((w) => (
              <option key={w.id} value={w.id}>
                {w.id}
                {w.name ? ` (${w.name})` : ''}
              </option>
            ))}
          </select>
          {problemsOf('workflowId')}
        </div>
        <div className="field" data-field="version">
          <label htmlFor={`${id}-version`}>Version</label>
          <select {...field('version')} value={version} onChange={(e) => setVersion(e.target.value)}>
            <option value="">
              {workflow ? `Default: v${workflow.defaultVersion}${workflow.pinnedVersion === null ? ' (the latest)' : ' (pinned)'}` : 'Default'}
            </option>
            {version && !versions.some((v) => String(v.version) === version) && <option value={version}>v{version}</option>}
            {versions.map((v) => (
              <option key={v.version} value={String(v.version)}>
                v{v.version}
                {v.version === workflow?.latestVersion ? ' (latest)' : ''}
                {v.deprecated ? ' (deprecated: refused)' : ''}
              </option>
            ))}
          </select>
          <span className="hint" id={`${id}-version-hint`}>
            Default: the pinned version, else the latest.
          </span>
          {problemsOf('version')}
        </div>
        <div className="field" data-field="idempotencyKey">
          <label htmlFor={`${id}-idempotencyKey`}>Idempotency key (optional)</label>
          <input
            {...field('idempotencyKey')}
            value={idempotencyKey}
            onChange={(e) => setIdempotencyKey(e.target.value)}
            maxLength={200}
            autoComplete="off"
            spellCheck={false}
          />
          <span className="hint" id={`${id}-idempotencyKey-hint`}>
            Starting again with the same key opens the run it first started.
          </span>
          {problemsOf('idempotencyKey')}
        </div>
        <div className="field wide" data-field="input">
          <label htmlFor={`${id}-input`}>Input (JSON)</label>
          <textarea {...field('input')} ref={inputRef} value={input} onChange={(e) => setInput(e.target.value)} spellCheck={false} rows={8} />
          <span className="hint" id={`${id}-input-hint`}>
            A JSON object; templates read it as <code>input.x</code>. Empty: {'{}'}.
          </span>
          {problemsOf('input', inputRef)}
        </div>
        <div className="field wide" data-field="config">
          <label htmlFor={`${id}-config`}>Config (JSON)</label>
          <textarea {...field('config')} ref={configRef} value={config} onChange={(e) => setConfig(e.target.value)} spellCheck={false} rows={4} />
          <span className="hint" id={`${id}-config-hint`}>
            A JSON object; templates read it as <code>config.x</code>. Empty: {'{}'}.
          </span>
          {problemsOf('config', configRef)}
        </div>
      </div>
      <div className="form-buttons">
        <button type="submit" disabled={started.fetching}>
          Start run
        </button>
      </div>
      <FormProblems summary={problems.summary} rest={problems.rest} />
      <ErrorText error={listed.error} />
      {workflowId && <ErrorText error={chosen.error} />}
    </form>
  );
}
