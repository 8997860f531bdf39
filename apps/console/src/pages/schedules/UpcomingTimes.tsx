import { formatInZone, localZone } from './format.js';

/** The next nominal fire times, each in the schedule's zone and in the reader's own. */
export function UpcomingTimes(props: { times: readonly string[]; timeZone: string; paused: boolean }) {
  const mine = localZone();
  if (!props.times.length) return <p className="empty-state">No fire time is left (the schedule has ended).</p>;
  return (
    <>
      {props.paused && <p className="hint">Paused: these are the times it had before the pause; unpausing computes them again from then.</p>}
      <div className="table-wrap">
        <table className="upcoming">
          <caption className="visually-hidden">Upcoming nominal fire times</caption>
          <thead>
            <tr>
              <th scope="col" className="num">
                #
              </th>
              <th scope="col">In {props.timeZone}</th>
              <th scope="col">Your time ({mine})</th>
            </tr>
          </thead>
          <tbody>
            {props.times.map((t, i) => (
              <tr key={t}>
                <td className="num">{i + 1}</td>
                <td className="nowrap">
                  <time dateTime={t} title={t}>
                    {formatInZone(t, props.timeZone)}
                  </time>
                </td>
                <td className="nowrap">
                  <time dateTime={t} title={t}>
                    {formatInZone(t, mine)}
                  </time>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
