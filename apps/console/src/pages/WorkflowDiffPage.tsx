import { Link, useParams, useSearchParams } from 'react-router';
import { useQuery } from 'urql';
import { ErrorText } from '../components/ErrorText.js';
import { canonicalJson } from './workflows/line-diff.js';
import { VersionDiff } from './workflows/VersionDiff.js';
import { VERSION_TEXT, WORKFLOW, type VersionText, type WorkflowWithVersions } from './workflows/operations.js';
import './admin.css';
import './workflows/forms.css';

type Basis = 'source' | 'definition';

/**
 * `/workflows/:workflowId/diff?from=N&to=M&as=source|definition`: the line diff of two versions,
 * of their source as published (default) or of their definitions as canonical JSON (keys
 * sorted), which ignores comments, layout and key order. Without `from` and `to`: the latest
 * version against the one before it.
 */
export function WorkflowDiffPage() {
  const workflowId = useParams().workflowId ?? '';
  const [search, setSearch] = useSearchParams();
  const [{ data, error, fetching }] = useQuery<{ workflow: WorkflowWithVersions | null }>({ query: WORKFLOW, variables: { workflowId } });
  const workflow = data?.workflow;
  const latest = workflow?.latestVersion ?? 0;
  const from = versionParam(search.get('from')) ?? Math.max(1, latest - 1);
  const to = versionParam(search.get('to')) ?? latest;
  const basis: Basis = search.get('as') === 'definition' ? 'definition' : 'source';
  const ready = latest > 0;
  const [before] = useQuery<{ workflowVersion: VersionText | null }>({ query: VERSION_TEXT, variables: { workflowId, version: from }, pause: !ready });
  const [after] = useQuery<{ workflowVersion: VersionText | null }>({ query: VERSION_TEXT, variables: { workflowId, version: to }, pause: !ready });
  const versions = workflow ? [...workflow.versions].sort((a, b) => b.version - a.version) : [];
  const href = `/workflows/${encodeURIComponent(workflowId)}`;

  const choose = (key: 'from' | 'to' | 'as', value: string) => {
    const next = new URLSearchParams(search);
    next.set('from', String(from));
    next.set('to', String(to));
    next.set(key, value);
    setSearch(next, { replace: true });
  };
  const textOf = (v: VersionText) => (basis === 'source' ? v.source : canonicalJson(v.definition));
  const a = before.data?.workflowVersion;
  const b = after.data?.workflowVersion;

  return (
    <section aria-labelledby="diff-title">
      <p className="crumbs">
        <Link to="/workflows">Workflows</Link> / <Link to={href}>{workflowId}</Link> /
      </p>
      <h1 id="diff-title">
        Compare versions of <span className="mono">{workflowId}</span>
      </h1>
      {fetching && !data && (
        <p className="loading" role="status">
          Loading the workflow…
        </p>
      )}
      <ErrorText error={error} />
      {workflow && (
        <div className="toolbar diff-choice">
          <VersionSelect label="From version" value={from} versions={versions} onChange={(v) => choose('from', v)} />
          <VersionSelect label="To version" value={to} versions={versions} onChange={(v) => choose('to', v)} />
          <label>
            Compare as
            <select value={basis} onChange={(e) => choose('as', e.target.value)}>
              <option value="source">Source as published</option>
              <option value="definition">Definitions (canonical JSON)</option>
            </select>
          </label>
        </div>
      )}
      {workflow && latest === 1 && <p className="hint">This workflow has one version: the diff compares it with itself.</p>}
      <ErrorText error={before.error} />
      <ErrorText error={after.error} />
      {a && b && a.version === from && b.version === to && (
        <VersionDiff before={textOf(a)} after={textOf(b)} caption={`Changes from version ${from} to version ${to} of ${workflowId}`} />
      )}
    </section>
  );
}

/** A labelled choice among `versions`, shown as `v<N>`. */
function VersionSelect(props: { label: string; value: number | undefined; versions: readonly { version: number }[]; onChange: (version: string) => void }) {
  return (
    <label>
      {props.label}
      <select value={props.value} onChange={(e) => props.onChange(e.target.value)}>
        {props.versions.map((v) => (
          <option key={v.version} value={v.version}>
            v{v.version}
          </option>
        ))}
      </select>
    </label>
  );
}

function versionParam(raw: string | null): number | undefined {
  const n = Number(raw);
  return raw && Number.isInteger(n) && n > 0 ? n : undefined;
}
