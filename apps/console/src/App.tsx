import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { Shell } from './layout/Shell.js';
import { BatchesPage } from './pages/batches/BatchesPage.js';
import { BatchPage } from './pages/batches/BatchPage.js';
import { FlowPage } from './pages/FlowPage.js';
import { KeysPage } from './pages/KeysPage.js';
import { NotFoundPage } from './pages/NotFoundPage.js';
import { PublishVersionPage } from './pages/PublishVersionPage.js';
import { QueuesPage } from './pages/QueuesPage.js';
import { RunPage } from './pages/RunPage.js';
import { RunsPage } from './pages/RunsPage.js';
import { SchedulePage } from './pages/SchedulePage.js';
import { SchedulesPage } from './pages/SchedulesPage.js';
import { SettingsPage } from './pages/SettingsPage.js';
import { SignInPage } from './pages/SignInPage.js';
import { StartRunPage } from './pages/StartRunPage.js';
import { WebhooksPage } from './pages/WebhooksPage.js';
import { WorkflowDiffPage } from './pages/WorkflowDiffPage.js';
import { WorkflowPage } from './pages/WorkflowPage.js';
import { WorkflowsPage } from './pages/WorkflowsPage.js';
import { SessionProvider } from './session/session.js';

/** The console: sign-in, then the pages under one frame. */
export function App() {
  return (
    <SessionProvider signIn={(submit, notice) => <SignInPage submit={submit} notice={notice} />}>
      <BrowserRouter>
        <Routes>
          <Route element={<Shell />}>
            <Route index element={<Navigate to="/runs" replace />} />
            <Route path="runs" element={<RunsPage />} />
            <Route path="runs/start" element={<StartRunPage />} />
            <Route path="runs/batches" element={<BatchesPage />} />
            <Route path="runs/batches/:batchId" element={<BatchPage />} />
            <Route path="runs/:runId" element={<RunPage />} />
            <Route path="workflows" element={<WorkflowsPage />} />
            <Route path="workflows/:workflowId" element={<WorkflowPage />} />
            <Route path="workflows/:workflowId/publish" element={<PublishVersionPage />} />
            <Route path="workflows/:workflowId/diff" element={<WorkflowDiffPage />} />
            <Route path="schedules" element={<SchedulesPage />} />
            <Route path="schedules/:scheduleId" element={<SchedulePage />} />
            <Route path="queues" element={<QueuesPage />} />
            <Route path="flow" element={<FlowPage />} />
            <Route path="keys" element={<KeysPage />} />
            <Route path="settings" element={<SettingsPage />} />
            <Route path="webhooks" element={<WebhooksPage />} />
            <Route path="*" element={<NotFoundPage />} />
          </Route>
        </Routes>
      </BrowserRouter>
    </SessionProvider>
  );
}
