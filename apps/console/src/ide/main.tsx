// Monaco's workers (editor, GraphQL language, JSON) bundled by Vite as same-origin worker files;
// this import must come before GraphiQL so monaco finds them when it starts.
import 'graphiql/setup-workers/vite';
import 'graphiql/style.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { IdePage } from './IdePage.js';
import './ide.css';

createRoot(document.getElementById('ide')!).render(
  <StrictMode>
    <IdePage />
  </StrictMode>,
);
