import { useLocation } from 'react-router';
import type { Published } from './PublishForm.js';

/** The history state a publish leaves for the workflow page it opens. */
interface PublishedState {
  published: Published;
}

/** The state to navigate with after `published`. */
export function publishedState(published: Published): PublishedState {
  return { published };
}

/**
 * On the workflow page opened by a publish: "Published version N" (or that the definition was
 * the latest version's, so none was made), and how many warnings the version has.
 */
export function PublishedNotice(props: { workflowId: string }) {
  const state = useLocation().state as Partial<PublishedState> | null;
  const published = state?.published;
  if (!published || published.workflowId !== props.workflowId) return null;
  const warned = published.warnings.length;
  return (
    <p className="done published" role="status">
      {published.identical
        ? `The definition is the same as version ${published.version}'s: no new version was made.`
        : `Published version ${published.version}.`}
      {warned > 0 && ` It has ${warned} warning${warned === 1 ? '' : 's'}: see below.`}
    </p>
  );
}
