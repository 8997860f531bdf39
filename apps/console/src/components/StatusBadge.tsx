/** A run or task status as a coloured label (the colour repeats the word, never replaces it). */
export function StatusBadge(props: { status: string | null | undefined }) {
  const status = props.status || 'UNREACHED';
  return <span className={`status status-${status.toLowerCase()}`}>{status}</span>;
}
