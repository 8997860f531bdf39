import { Link } from 'react-router';

export function NotFoundPage() {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        No console page lives at this address. <Link to="/runs">Go to the runs</Link>.
      </p>
    </section>
  );
}
