/**
 * @module /admin: the web console (issue 16), server-rendered with Hono's JSX and a little htmx. A
 * thin face: every page calls the service with the signed-in key's caller, exactly as the API does,
 * so the service decides what each role may see and do; pages only hide controls a role lacks.
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { MAX_CONTENT_BYTES, MnemoError, type Service } from '../../src/index.js';
import { bodyLimit } from '../body-limit.js';
import type { AppEnv } from '../env.js';
import { closeIfBodyUnread, HTTP_ERRORS, toMnemoError } from '../errors.js';
import { bodyTimeout } from '../inflight.js';
import { assetRoutes } from './assets.js';
import { auditPages } from './audit.js';
import type { AdminEnv } from './env.js';
import { adminLogRoutes } from './admin-log.js';
import { keyPages } from './keys.js';
import { frameOf, query } from './context.js';
import { Page } from './layout.js';
import { memoryPages } from './memory.js';
import { isEditForm, memoryEditPages } from './memory-edit.js';
import { redactionPages } from './redaction.js';
import { noticeText, withNotice } from './notices.js';
import { safeNext, seeOther, trimTrailingSlash } from './redirect.js';
import { clearSessionCookie, consoleSession, cookieOf, csrfField, formBody, sameOriginPosts, sessionCookie } from './session.js';
import { sessionPages } from './sessions.js';
import { storePages } from './store.js';
import { storesPages } from './stores.js';
import { inWorkspace, nameWorkspace, workspacePages } from './workspace.js';
import { Alert, errorOf, Notice } from './ui.js';

/** A sign-in form is one short field: the only body read before a key is known stays this small. */
const SIGN_IN_MAX_BYTES = 1024;
/** Console forms hold names, descriptions and ids; memory content comes only through *Edit*'s form. */
const FORM_MAX_BYTES = 16 * 1024;
/** *Edit*'s form: a memory's whole content, each byte percent-encoded at worst (three characters), and its few short fields. */
const EDIT_FORM_MAX_BYTES = 3 * MAX_CONTENT_BYTES + 4 * 1024;

/** Scripts, styles and images from mnemo only; no framing; forms post back here only. */
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

export interface AdminRouteOptions {
  /** Unexpected failures (500s), with their stacks. */
  fault: (line: string) => void;
  /** Aborted uploads and other refusals that are not ours. */
  warn: (line: string) => void;
  /** The API's body slots and timeouts (inflight.ts), shared with /v1: a signed-in form holds one while its body arrives. */
  bodySlots: MiddlewareHandler<AppEnv>;
  /** MNEMO_BODY_TIMEOUT_SECONDS, for the sign-in form's body (read before a key is known, so without a slot). */
  bodyTimeoutMs: number;
}

export function adminRoutes(service: Service, { fault, warn, bodySlots, bodyTimeoutMs }: AdminRouteOptions) {
  const app = new Hono<AdminEnv>();
  app.onError(renderError(fault, warn));
  app.use('*', async function securityHeaders(c, next) {
    await next();
    c.header('content-security-policy', CSP);
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'same-origin');
    if (!c.res.headers.has('cache-control')) c.header('cache-control', 'no-store');
  });
  app.use('*', trimTrailingSlash());
  app.route('/assets', assetRoutes());
  app.use('*', sameOriginPosts());

  app.get('/sign-in', (c) => c.html(<SignIn next={safeNext(c.req.query('next'))} notice={noticeText(query(c))} />));
  app.post('/sign-in', bodyTimeout(bodyTimeoutMs), bodyLimit(SIGN_IN_MAX_BYTES), async (c) => {
    const form = await formBody(c);
    const next = safeNext(form.get('next') ?? undefined);
    try {
      const { session } = await service.consoleSessions.signIn((form.get('api_key') ?? '').trim());
      sessionCookie(c, session.id);
      return seeOther(c, next);
    } catch (err) {
      if (!(err instanceof MnemoError)) throw err;
      return c.html(<SignIn next={next} error={err.message} />, HTTP_ERRORS[err.code].status);
    }
  });

  // Everything below needs a console session; the session is known before any body is read, and
  // the body then takes one of the API's slots under its key, like a /v1 body.
  app.use('*', consoleSession(service));
  // Another workspace (an operator key's), checked as the API checks anthropic-workspace-id.
  app.use('/workspaces/:workspace/*', inWorkspace(service));
  app.use('*', nameWorkspace(service));
  app.use('*', bodySlots);
  app.use('*', formLimits());
  app.use('*', async function csrf(c, next) {
    if (c.req.method === 'POST') {
      const form = await formBody(c);
      csrfField(form, c);
      c.set('form', form);
    }
    await next();
  });

  app.post('/sign-out', async (c) => {
    await service.consoleSessions.signOut(cookieOf(c));
    clearSessionCookie(c);
    return c.redirect(withNotice('/admin/sign-in', 'signed_out'), 303);
  });
  // The same pages act in the key's own workspace at /admin/… and in another at /admin/workspaces/<id>/….
  const pages = workspaceRoutes(service);
  app.route('/workspaces/:workspace', pages);
  app.route('/workspaces', workspacePages(service));
  app.route('/', pages);
  // A console URL with no page (an id trimmed off, a typo) is a console page too, with the navigation,
  // not the API's JSON (a sub-app's notFound is not used once mounted, so this is a route, the last one).
  // Only GET (and HEAD): another method keeps the server's 405 with Allow, or its 404.
  app.get('*', (c) => {
    throw new MnemoError('not_found', `there is no console page at ${c.req.path}`);
  });
  return app;
}

/** Every console form is small but *Edit*'s, which carries a memory's whole content. */
function formLimits(): MiddlewareHandler<AppEnv> {
  const form = bodyLimit(FORM_MAX_BYTES);
  const edit = bodyLimit(EDIT_FORM_MAX_BYTES);
  return function consoleBodyLimit(c, next) {
    return (c.req.method === 'POST' && isEditForm(c.req.path) ? edit : form)(c, next);
  };
}

/** One workspace's pages, under its root (c.var.root). */
function workspaceRoutes(service: Service) {
  const app = new Hono<AdminEnv>();
  app.get('/', (c) => seeOther(c, `${c.var.root}/stores`));
  app.route('/stores', storesPages(service));
  app.route('/stores', storePages(service));
  app.route('/stores', memoryPages(service));
  app.route('/stores', memoryEditPages(service));
  app.route('/stores', redactionPages(service));
  app.route('/stores', auditPages(service));
  app.route('/sessions', sessionPages(service));
  app.route('/keys', keyPages(service));
  app.route('/admin-actions', adminLogRoutes(service));
  return app;
}

function SignIn({ next, error, notice }: { next: string; error?: string; notice?: string | undefined }) {
  return (
    <Page title="Sign in" frame={null}>
      <h1>Sign in</h1>
      <p>Sign in with a mnemo API key. The console acts with that key's role, workspace and store grants, exactly as the API does.</p>
      <Notice message={notice} />
      <Alert id="api-key-error" message={error} />
      <form method="post" action="/admin/sign-in" class="stack">
        <input type="hidden" name="next" value={next} />
        <label>
          API key
          <input type="password" name="api_key" autocomplete="current-password" required autofocus {...errorOf('api-key-error', error)} />
        </label>
        <div><button type="submit">Sign in</button></div>
      </form>
    </Page>
  );
}

/** Errors as pages that carry the API's own message and status; a failure of ours is logged and a bare 500. */
function renderError(fault: (line: string) => void, warn: (line: string) => void) {
  return function renderConsoleError(err: Error, c: Context<AdminEnv>) {
    const e = toMnemoError(err, c, (line) => fault(`console ${line}`), warn);
    const { status, type } = HTTP_ERRORS[e.code];
    const frame = c.get('console') ? frameOf(c) : null;
    c.header('content-security-policy', CSP);
    if (e.details.allow) c.header('allow', e.details.allow.join(', '));
    closeIfBodyUnread(c);
    if (c.req.header('hx-request')) return c.html(<p class="alert" role="alert">{e.message}</p>, status);
    return c.html(
      <Page title={`Could not do that (${status} ${type})`} frame={frame}>
        <h1>Could not do that</h1>
        <p class="alert" role="alert"><strong>{type}</strong>: {e.message}</p>
        <p><a href={`${frame?.root ?? '/admin'}/stores`}>Back to the stores</a></p>
      </Page>,
      status,
    );
  };
}
