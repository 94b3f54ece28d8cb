/** @module /admin/sessions: active and ended mount sessions, their mounts, and "End session". */
import { Hono } from 'hono';
import type { Service, Session } from '../../src/index.js';
import { canWrite, frameOf, query } from './context.js';
import type { AdminEnv } from './env.js';
import { Page } from './layout.js';
import { seeOther, segment } from './redirect.js';
import { noticeText, withNotice } from './notices.js';
import { Cancel, Confirm, Csrf, Notice, Pager, qs, Time } from './ui.js';

export function sessionPages(service: Service) {
  const app = new Hono<AdminEnv>();

  app.get('/', async (c) => {
    const q = query(c);
    const page = await service.sessions.listSessions(c.var.caller, 50, q['page'] || null);
    const now = await service.clock();
    const frame = frameOf(c);
    return c.html(
      <Page title="Sessions" frame={frame}>
        <h1>Sessions</h1>
        <Notice message={noticeText(q)} />
        {page.data.length === 0 ? <p>No sessions.</p> : (
          <table class="responsive">
            <thead><tr><th scope="col">Session</th><th scope="col">Status</th><th scope="col">Mounts</th><th scope="col">Started</th><th scope="col">Ended</th><th scope="col">Action</th></tr></thead>
            <tbody>
              {page.data.map((s) => (
                <tr id={s.id}>
                  <td data-label="Session"><code>{s.id}</code></td>
                  <td data-label="Status"><span class={`badge ${s.status}`}>{s.status}</span></td>
                  <td data-label="Mounts"><Mounts session={s} root={frame.root} /></td>
                  <td data-label="Started"><Time at={s.createdAt} now={now} /></td>
                  <td data-label="Ended"><Time at={s.endedAt} now={now} /></td>
                  <td data-label="Action">
                    {s.status === 'active' && canWrite(c) ? (
                      <Confirm id={`end-${s.id}`} label="End session" title={`End session ${s.id}?`} danger>
                        <p>Its stores are unmounted at once: an agent working in them loses its mounts. An ended session cannot be started again.</p>
                        <form method="post" action={`${frame.root}/sessions/${s.id}/end`}>
                          <Csrf token={frame.csrf} />
                          <button type="submit" class="danger">End session</button> <Cancel />
                        </form>
                      </Confirm>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <Pager next={page.nextPage} href={(p) => `${frame.root}/sessions${qs({ page: p })}`} />
      </Page>,
    );
  });

  app.post('/:session/end', async (c) => {
    const ended = await service.sessions.endSession(c.var.caller, c.req.param('session'));
    return seeOther(c, `${withNotice(`${c.var.root}/sessions`, 'session_ended')}#${segment(ended.id)}`);
  });

  return app;
}

function Mounts({ session, root }: { session: Session; root: string }) {
  return (
    <ul>
      {session.resources.map((r) => (
        <li>
          <a href={`${root}/stores/${r.storeId}`}>{r.name}</a> at <code>{r.mountPath}</code> ({r.access}{r.asOf ? <>, a snapshot as of <time datetime={r.asOf}>{r.asOf}</time></> : null})<br />
          <span class="muted">host path <code>{r.hostPath}</code></span>
        </li>
      ))}
    </ul>
  );
}
