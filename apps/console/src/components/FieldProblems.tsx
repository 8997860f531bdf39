import { textSpotOf, type ApiProblem } from '../api/problems.js';

/**
 * The problems of one form field, under it: each with its path (and node) in the API's words. A
 * problem at a place in the text (`line 3, column 7`) is a button that `locate` moves the
 * caret to. `id` is for the field's `aria-describedby`. `heading`, when given, is one line
 * above the list, announced as an alert (the form's only one).
 */
export function FieldProblems(props: {
  id?: string;
  field: string;
  problems: readonly ApiProblem[] | undefined;
  locate?: (line: number, column: number) => void;
  heading?: string;
}) {
  const { problems, locate } = props;
  if (!problems?.length) return null;
  const list = (
    <ul className="field-problems" id={props.id} data-problems-for={props.field}>
      {problems.map((p, i) => {
        const spot = textSpotOf(p);
        return (
          <li key={i} data-path={p.path ?? ''}>
            {p.path &&
              (spot && locate ? (
                <button type="button" className="link-button" onClick={() => locate(spot.line, spot.column)} title="Go to this place in the text">
                  {p.path}
                </button>
              ) : (
                <code>{p.path}</code>
              ))}
            {p.nodeId && <span className="muted"> (node {p.nodeId})</span>}
            {(p.path || p.nodeId) && ': '}
            {p.message}
          </li>
        );
      })}
    </ul>
  );
  if (!props.heading) return list;
  return (
    <>
      <p className="field-problems-heading" role="alert">
        {props.heading}
      </p>
      {list}
    </>
  );
}

/** The summary of a refused form: each error's `CODE: message`, then the problems no field holds. */
export function FormProblems(props: { summary: readonly string[]; rest: readonly ApiProblem[] }) {
  if (!props.summary.length && !props.rest.length) return null;
  return (
    <div className="error form-problems" role="alert">
      {props.summary.map((line, i) => (
        <p key={i}>{line}</p>
      ))}
      {props.rest.length > 0 && <FieldProblems field="form" problems={props.rest} />}
    </div>
  );
}
