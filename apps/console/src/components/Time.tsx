/** An instant in the reader's local time; the exact ISO value is in the element and its title. */
export function Time(props: { value: string | null | undefined; seconds?: boolean }) {
  if (!props.value) return <span className="muted">—</span>;
  const date = new Date(props.value);
  if (Number.isNaN(date.getTime())) return <span>{props.value}</span>;
  const text = date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: props.seconds ? 'medium' : 'short' });
  return (
    <time dateTime={props.value} title={props.value}>
      {text}
    </time>
  );
}
