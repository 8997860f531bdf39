import { useMemo } from 'react';
import { lineDiff } from './line-diff.js';

/**
 * The line diff of two texts as a table: each line with its number before and after, `+` for an
 * added line and `−` for a removed one (words for screen readers), unchanged runs folded; says so
 * when the texts differ too much to line up (see {@link lineDiff}).
 */
export function VersionDiff(props: { before: string; after: string; caption: string }) {
  const diff = useMemo(() => lineDiff(props.before, props.after), [props.before, props.after]);
  return (
    <>
      <p className="diff-counts" role="status">
        {diff.added === 0 && diff.removed === 0 ? (
          'No differences.'
        ) : (
          <>
            <span className="diff-count-added">
              {diff.added} line{diff.added === 1 ? '' : 's'} added
            </span>
            , <span className="diff-count-removed">{diff.removed} removed</span>
            {!diff.aligned && ': too many changes to line them up, so the lines that differ are shown removed, then added'}
          </>
        )}
      </p>
      <div className="table-wrap diff-wrap">
        <table className="diff">
          <caption className="visually-hidden">{props.caption}</caption>
          <thead className="visually-hidden">
            <tr>
              <th scope="col">Line before</th>
              <th scope="col">Line after</th>
              <th scope="col">Change</th>
              <th scope="col">Text</th>
            </tr>
          </thead>
          <tbody>
            {diff.rows.map((row, i) =>
              row.kind === 'fold' ? (
                <tr key={i} className="diff-fold">
                  <td colSpan={4}>
                    … {row.count} unchanged line{row.count === 1 ? '' : 's'}
                  </td>
                </tr>
              ) : (
                <tr key={i} className={`diff-${row.kind}`} data-change={row.kind}>
                  <td className="diff-num">{row.kind === 'added' ? '' : row.oldLine}</td>
                  <td className="diff-num">{row.kind === 'removed' ? '' : row.newLine}</td>
                  <td className="diff-mark">
                    <span aria-hidden="true">{row.kind === 'added' ? '+' : row.kind === 'removed' ? '−' : ''}</span>
                    <span className="visually-hidden">{row.kind === 'same' ? 'unchanged' : row.kind}</span>
                  </td>
                  <td className="diff-text">{row.text}</td>
                </tr>
              ),
            )}
          </tbody>
        </table>
      </div>
    </>
  );
}
