// The admin console: plain DOM, no framework. Every datum comes from the admin-scoped /api/v1
// endpoints, called with the credential the user signed in with (none when auth is off).
/* global document, window, location, sessionStorage, fetch, setTimeout */

const API = '/api/v1';
const CREDENTIAL_KIND = 'context-ledger.admin.credential-kind';
const CREDENTIAL_VALUE = 'context-ledger.admin.credential';
const POLL_MS = 1000;

/** @typedef {{ kind: 'api_key' | 'bearer', value: string }} Credential */
/** @typedef {{ subject: string, tenant: string | null, via: string }} Actor */
/**
 * @typedef {{ position: string, stream_id: string, revision: number, type: string, schema_version: number,
 *   occurred_at: string, recorded_at: string, actor: Actor, project: string, command_id: string | null,
 *   correlation_id: string | null, causation_id: string | null, data: unknown }} AuditEvent
 */
/** @typedef {{ events: AuditEvent[], next_cursor: string | null }} AuditPage */
/**
 * @typedef {{ stream_id: string, aggregate: string | null, as_of: string | null, revision: number | null,
 *   state: unknown, events: AuditEvent[] }} StreamView
 */
/**
 * @typedef {{ processed_events: number, total_events: number, percent: number, eta_seconds: number | null,
 *   started_at: string }} RebuildProgress
 */
/**
 * @typedef {{ name: string, version: number, state: 'running' | 'stopped' | 'rebuilding', checkpoint: string | null,
 *   head: string | null, lag_events: number, lag_seconds: number, events_per_second: number,
 *   last_error: { message: string, at: string } | null, rebuild: RebuildProgress | null,
 *   quarantined: QuarantinedEvent[] }} ProjectionStatus
 */
/**
 * @typedef {{ position: string, event_type: string, stream_id: string, error: string, quarantined_at: string }}
 *   QuarantinedEvent
 */
/**
 * @typedef {{ job_id: string, project_id: string, status: string, phase: string | null, percent: number,
 *   message: string | null, created_at: string, updated_at: string }} Job
 */
/**
 * @typedef {{ name: string, enter(args: string[]): Promise<void>, refresh?: () => Promise<void> }} View
 */

// ---------------------------------------------------------------------------------------------
// DOM helpers

/**
 * @template {HTMLElement} T
 * @param {string} selector
 * @param {new () => T} type
 * @returns {T}
 */
const $ = (selector, type) => {
  const found = document.querySelector(selector);
  if (!(found instanceof type)) throw new Error(`The page has no ${type.name} at '${selector}'`);
  return found;
};

/**
 * An element with attributes and children; text is always set as text, never parsed as HTML.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, string | number | boolean | null | undefined>} [attributes]
 * @param {(Node | string | null | undefined)[]} children
 * @returns {HTMLElementTagNameMap[K]}
 */
const h = (tag, attributes = {}, ...children) => {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined) element.append(child);
  return element;
};

/** @param {unknown} value */
const json = (value) => JSON.stringify(value, null, 2);

/** @param {string | null | undefined} iso */
const time = (iso) => (iso ? new Date(iso).toLocaleString() : '—');

/**
 * Positions are two zero-padded numbers; shown without the padding.
 * @param {string | null | undefined} position
 */
const shortPosition = (position) =>
  position
    ? position
        .split('-')
        .map((part) => part.replace(/^0+(?=\d)/, ''))
        .join('-')
    : '—';

/** @param {number | null | undefined} seconds */
const duration = (seconds) => {
  if (seconds === null || seconds === undefined) return '—';
  if (seconds < 60) return `${Math.round(seconds)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
};

/**
 * @param {number} percent
 * @param {string} label
 */
const progressBar = (percent, label) =>
  h(
    'span',
    { class: 'progress' },
    h('progress', { max: 100, value: percent, 'aria-label': label }),
    h('span', { class: 'progress-text' }, `${Math.round(percent)}%`),
  );

/** @param {string} state */
const badge = (state) => h('span', { class: `badge badge-${state}` }, state);

/**
 * Updates table rows in place by key, so polling keeps focus and scroll where they are.
 * @template T
 * @param {HTMLTableSectionElement} body
 * @param {T[]} items
 * @param {(item: T) => string} key
 * @param {(item: T) => HTMLTableRowElement} render
 */
const replaceRows = (body, items, key, render) => {
  /** @type {Map<string, HTMLTableRowElement>} */
  const existing = new Map();
  for (const row of Array.from(body.rows)) existing.set(row.dataset.key ?? '', row);
  items.forEach((item, index) => {
    const fresh = render(item);
    fresh.dataset.key = key(item);
    const old = existing.get(fresh.dataset.key);
    existing.delete(fresh.dataset.key);
    if (old) {
      // Keep the row (and any focused control in it); swap only the cells whose content changed.
      Array.from(fresh.cells).forEach((cell, i) => {
        const current = old.cells[i];
        if (current && !current.isEqualNode(cell)) current.replaceWith(cell);
      });
      if (body.rows[index] !== old) body.insertBefore(old, body.rows[index] ?? null);
    } else {
      body.insertBefore(fresh, body.rows[index] ?? null);
    }
  });
  for (const row of existing.values()) row.remove();
};

// ---------------------------------------------------------------------------------------------
// The API, with the signed-in credential

/** @returns {Credential | null} */
const storedCredential = () => {
  const value = sessionStorage.getItem(CREDENTIAL_VALUE);
  if (!value) return null;
  return { kind: sessionStorage.getItem(CREDENTIAL_KIND) === 'bearer' ? 'bearer' : 'api_key', value };
};

/** @param {Credential | null} credential */
const storeCredential = (credential) => {
  if (credential) {
    sessionStorage.setItem(CREDENTIAL_KIND, credential.kind);
    sessionStorage.setItem(CREDENTIAL_VALUE, credential.value);
  } else {
    sessionStorage.removeItem(CREDENTIAL_KIND);
    sessionStorage.removeItem(CREDENTIAL_VALUE);
  }
};

class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} message
   * @param {string | null} correlationId
   */
  constructor(status, message, correlationId) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.correlationId = correlationId;
  }
}

/**
 * @param {string} path
 * @param {RequestInit} [init]
 * @returns {Promise<unknown>}
 */
const api = async (path, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set('accept', 'application/json');
  const credential = storedCredential();
  if (credential?.kind === 'api_key') headers.set('x-api-key', credential.value);
  if (credential?.kind === 'bearer') headers.set('authorization', `Bearer ${credential.value}`);
  const response = await fetch(`${API}${path}`, { ...init, headers });
  const body = /** @type {unknown} */ (await response.json().catch(() => null));
  if (response.ok) return body;
  const error =
    /** @type {{ error?: { detail?: string, message?: string, correlation_id?: string } } | null} */ (body)
      ?.error;
  throw new ApiError(
    response.status,
    error?.detail ?? error?.message ?? `${response.status} ${response.statusText}`,
    error?.correlation_id ?? null,
  );
};

/**
 * A form field's text, trimmed.
 * @param {FormData} data
 * @param {string} name
 */
const field = (data, name) => {
  const value = data.get(name);
  return typeof value === 'string' ? value.trim() : '';
};

/**
 * A query string from the non-empty values.
 * @param {Record<string, string | null | undefined>} values
 */
const query = (values) => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value) params.set(name, value);
  const text = params.toString();
  return text ? `?${text}` : '';
};

// ---------------------------------------------------------------------------------------------
// Notices and sign-in

const notice = $('#notice', HTMLParagraphElement);
const signIn = $('#sign-in', HTMLElement);
const signOut = $('#sign-out', HTMLButtonElement);

/** @param {string} message */
const showNotice = (message) => {
  notice.textContent = message;
  notice.hidden = false;
};
const clearNotice = () => {
  notice.hidden = true;
  notice.textContent = '';
};

/** @param {string} reason */
const askForCredentials = (reason) => {
  stopPolling();
  $('#sign-in-reason', HTMLParagraphElement).textContent = reason;
  signIn.hidden = false;
  $('#sign-in-form input[name="secret"]', HTMLInputElement).focus();
};

/**
 * What every view does with a failed call: credentials problems open the sign-in box.
 * @param {unknown} error
 */
const report = (error) => {
  if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
    askForCredentials(error.message);
  } else if (error instanceof ApiError) {
    showNotice(`${error.message}${error.correlationId ? ` (correlation id ${error.correlationId})` : ''}`);
  } else {
    showNotice(error instanceof Error ? error.message : String(error));
  }
};

/**
 * An event listener that runs async work and reports its failure.
 * @param {() => Promise<unknown>} work
 */
const handle = (work) => () => void work().catch(report);

$('#sign-in-form', HTMLFormElement).addEventListener('submit', (event) => {
  event.preventDefault();
  const form = /** @type {HTMLFormElement} */ (event.currentTarget);
  const data = new FormData(form);
  storeCredential({
    kind: field(data, 'kind') === 'bearer' ? 'bearer' : 'api_key',
    value: field(data, 'secret'),
  });
  form.reset();
  signIn.hidden = true;
  signOut.hidden = false;
  void route();
});

// A fresh page shows nothing read with the old credential.
signOut.addEventListener('click', () => {
  storeCredential(null);
  location.reload();
});

// ---------------------------------------------------------------------------------------------
// Polling: only the visible view, only while the tab is visible

let pollGeneration = 0;

/** @param {() => Promise<void>} refresh */
const poll = (refresh) => {
  const generation = ++pollGeneration;
  const tick = async () => {
    if (generation !== pollGeneration || document.visibilityState !== 'visible') return;
    try {
      await refresh();
    } catch (error) {
      report(error);
    }
    if (generation === pollGeneration) setTimeout(() => void tick(), POLL_MS);
  };
  setTimeout(() => void tick(), POLL_MS);
};

const stopPolling = () => {
  pollGeneration++;
};

// ---------------------------------------------------------------------------------------------
// Timeline

const timelineForm = $('#timeline-filters', HTMLFormElement);
const timelineBody = $('#timeline-table tbody', HTMLTableSectionElement);
const timelineMore = $('#timeline-more', HTMLButtonElement);
const timelineCount = $('#timeline-count', HTMLParagraphElement);
/** @type {string | null} */
let timelineCursor = null;

/** @param {AuditEvent} event */
const streamHref = (event) => `#stream/${encodeURIComponent(event.stream_id)}/${event.revision}`;

/** @param {AuditEvent} event */
const timelineRow = (event) => {
  const row = h(
    'tr',
    { class: 'clickable' },
    h('td', { title: event.position, class: 'nowrap' }, shortPosition(event.position)),
    h('td', { class: 'nowrap' }, h('time', { datetime: event.occurred_at }, time(event.occurred_at))),
    h('td', {}, h('a', { href: streamHref(event) }, event.stream_id)),
    h('td', {}, String(event.revision)),
    h('td', {}, h('code', {}, event.type)),
    h('td', {}, `${event.actor.subject} `, h('span', { class: 'muted' }, `(${event.actor.via})`)),
    h('td', {}, event.project),
  );
  row.addEventListener('click', (click) => {
    if (!(click.target instanceof HTMLAnchorElement)) location.hash = streamHref(event);
  });
  return row;
};

/** The filters as API parameters; local date-times become ISO 8601 instants. */
const timelineFilters = () => {
  const data = new FormData(timelineForm);
  const instant = (/** @type {string} */ name) =>
    field(data, name) ? new Date(field(data, name)).toISOString() : '';
  return {
    category: field(data, 'category'),
    type: field(data, 'type'),
    actor: field(data, 'actor'),
    project: field(data, 'project'),
    correlation_id: field(data, 'correlation_id'),
    since: instant('since'),
    until: instant('until'),
    order: field(data, 'order'),
  };
};

/** @param {boolean} more */
const loadTimeline = async (more) => {
  const page = /** @type {AuditPage} */ (
    await api(`/audit/events${query({ ...timelineFilters(), cursor: more ? timelineCursor : null })}`)
  );
  if (!more) timelineBody.replaceChildren();
  timelineBody.append(...page.events.map(timelineRow));
  timelineCursor = page.next_cursor;
  timelineMore.hidden = timelineCursor === null;
  const shown = timelineBody.rows.length;
  timelineCount.textContent = `${shown} event${shown === 1 ? '' : 's'}${timelineCursor ? ', more available' : ''}`;
};

timelineForm.addEventListener('submit', (event) => {
  event.preventDefault();
  clearNotice();
  handle(() => loadTimeline(false))();
});
// The form's fields are cleared only after the reset event.
timelineForm.addEventListener('reset', () => setTimeout(handle(() => loadTimeline(false))));
timelineMore.addEventListener(
  'click',
  handle(() => loadTimeline(true)),
);

// ---------------------------------------------------------------------------------------------
// Stream: step an aggregate through its history

const streamForm = $('#stream-open', HTMLFormElement);
const streamInput = $('#stream-open input[name="stream_id"]', HTMLInputElement);
const streamBody = $('#stream-body', HTMLDivElement);
const slider = $('#stream-slider', HTMLInputElement);
const sliderOutput = $('#stream-position', HTMLOutputElement);
const streamEvents = $('#stream-events', HTMLOListElement);
const streamState = $('#stream-state', HTMLPreElement);
const streamEvent = $('#stream-event', HTMLPreElement);
/** @type {{ id: string, aggregate: string | null, events: AuditEvent[] } | null} */
let stream = null;
let stateRequest = 0;

/** @param {number} index */
const showRevision = async (index) => {
  if (!stream) return;
  const event = stream.events[index];
  if (!event) return;
  const label = `revision ${event.revision} of ${stream.events.length}: ${event.type}`;
  slider.value = String(index);
  slider.setAttribute('aria-valuetext', label);
  sliderOutput.textContent = `${label} · ${time(event.occurred_at)}`;
  Array.from(streamEvents.children).forEach((item, i) => {
    if (i === index) item.setAttribute('aria-current', 'step');
    else item.removeAttribute('aria-current');
  });
  streamEvent.textContent = json(event.data);
  if (!stream.aggregate) {
    streamState.textContent = 'No aggregate is known for this kind of stream.';
    return;
  }
  // Answers can arrive out of order while the slider moves: only the latest one is shown.
  const request = ++stateRequest;
  const view = /** @type {StreamView} */ (
    await api(`/streams/${encodeURIComponent(stream.id)}${query({ as_of: event.position })}`)
  );
  if (request === stateRequest) streamState.textContent = json(view.state);
};

/**
 * @param {string} id
 * @param {number | null} revision the revision to show first; the latest when null
 */
const openStream = async (id, revision) => {
  const view = /** @type {StreamView} */ (await api(`/streams/${encodeURIComponent(id)}`));
  stream = { id: view.stream_id, aggregate: view.aggregate, events: view.events };
  $('#stream-title', HTMLHeadingElement).textContent = `Stream ${view.stream_id}`;
  $('#stream-summary', HTMLParagraphElement).textContent =
    `${view.events.length} event${view.events.length === 1 ? '' : 's'} · aggregate: ${view.aggregate ?? 'none'}`;
  streamInput.value = view.stream_id;
  streamEvents.replaceChildren(
    ...view.events.map((event, index) =>
      h(
        'li',
        {},
        h(
          'button',
          { type: 'button', class: 'link', 'data-index': index },
          `#${event.revision} `,
          h('code', {}, event.type),
          ` · ${time(event.occurred_at)}`,
        ),
      ),
    ),
  );
  slider.max = String(Math.max(0, view.events.length - 1));
  streamBody.hidden = false;
  const wanted = revision === null ? -1 : view.events.findIndex((event) => event.revision === revision);
  await showRevision(wanted >= 0 ? wanted : view.events.length - 1);
};

streamForm.addEventListener('submit', (event) => {
  event.preventDefault();
  location.hash = `#stream/${encodeURIComponent(streamInput.value.trim())}`;
});
slider.addEventListener(
  'input',
  handle(() => showRevision(Number(slider.value))),
);
streamEvents.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-index]') : null;
  if (button instanceof HTMLButtonElement) handle(() => showRevision(Number(button.dataset.index)))();
});

// ---------------------------------------------------------------------------------------------
// Projections

const projectionsBody = $('#projections-table tbody', HTMLTableSectionElement);

/** @param {ProjectionStatus} projection */
const projectionRow = (projection) => {
  const { rebuild } = projection;
  const button = h(
    'button',
    { type: 'button', 'data-rebuild': projection.name, disabled: projection.state === 'rebuilding' },
    'Rebuild',
  );
  return h(
    'tr',
    {},
    h('th', { scope: 'row' }, projection.name, h('span', { class: 'muted' }, ` v${projection.version}`)),
    h('td', {}, badge(projection.state)),
    h(
      'td',
      {},
      h('span', { title: projection.checkpoint ?? '' }, shortPosition(projection.checkpoint)),
      ' / ',
      h('span', { title: projection.head ?? '' }, shortPosition(projection.head)),
    ),
    h('td', {}, `${projection.lag_events} events · ${duration(projection.lag_seconds)}`),
    h('td', {}, projection.events_per_second.toFixed(1)),
    h(
      'td',
      { class: projection.last_error ? 'error' : 'muted' },
      projection.last_error ? `${projection.last_error.message} (${time(projection.last_error.at)})` : 'none',
    ),
    h(
      'td',
      {
        class: projection.quarantined.length ? 'error' : 'muted',
        title: projection.quarantined.map((q) => `${q.position} ${q.event_type} ${q.stream_id}: ${q.error}`).join('\n'),
      },
      projection.quarantined.length ? `${projection.quarantined.length} skipped` : 'none',
    ),
    h(
      'td',
      { class: 'rebuild' },
      rebuild
        ? h(
            'div',
            { class: 'rebuild-progress' },
            progressBar(rebuild.percent, `Rebuild of ${projection.name}`),
            h(
              'span',
              { class: 'muted' },
              `${rebuild.processed_events}/${rebuild.total_events} · ETA ${duration(rebuild.eta_seconds)}`,
            ),
          )
        : button,
    ),
  );
};

/** @param {ProjectionStatus[]} projections */
const renderProjections = (projections) =>
  replaceRows(projectionsBody, projections, (p) => p.name, projectionRow);

const refreshProjections = async () => {
  const { projections } = /** @type {{ projections: ProjectionStatus[] }} */ (await api('/projections'));
  renderProjections(projections);
};

projectionsBody.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-rebuild]') : null;
  if (!(button instanceof HTMLButtonElement)) return;
  const name = button.dataset.rebuild ?? '';
  button.disabled = true;
  clearNotice();
  api(`/projections/${encodeURIComponent(name)}/rebuild`, { method: 'POST' })
    .then(refreshProjections)
    .catch((error) => {
      button.disabled = false;
      report(error);
    });
});

// ---------------------------------------------------------------------------------------------
// Jobs

const jobsForm = $('#jobs-filters', HTMLFormElement);
const jobsBody = $('#jobs-table tbody', HTMLTableSectionElement);

/** @param {Job} job */
const jobRow = (job) =>
  h(
    'tr',
    {},
    h(
      'td',
      {},
      h(
        'a',
        { href: `#stream/job-${encodeURIComponent(job.job_id)}`, title: job.job_id },
        job.job_id.slice(0, 8),
      ),
    ),
    h('td', {}, job.project_id),
    h('td', {}, badge(job.status)),
    h('td', {}, job.phase ?? '—'),
    h('td', {}, progressBar(job.percent, `Progress of job ${job.job_id}`)),
    h('td', {}, job.message ?? ''),
    h('td', {}, h('time', { datetime: job.updated_at }, time(job.updated_at))),
  );

const refreshJobs = async () => {
  const data = new FormData(jobsForm);
  const filters = { status: field(data, 'status'), project: field(data, 'project') };
  const { jobs } = /** @type {{ jobs: Job[] }} */ (await api(`/jobs${query(filters)}`));
  replaceRows(jobsBody, jobs, (job) => job.job_id, jobRow);
  $('#jobs-empty', HTMLParagraphElement).hidden = jobs.length > 0;
};

jobsForm.addEventListener('change', handle(refreshJobs));
jobsForm.addEventListener('submit', (event) => {
  event.preventDefault();
  handle(refreshJobs)();
});

// ---------------------------------------------------------------------------------------------
// Views and routing (#timeline, #stream/<id>[/<revision>], #projections, #jobs)

/** @type {View[]} */
const VIEWS = [
  { name: 'timeline', enter: () => loadTimeline(false) },
  {
    name: 'stream',
    enter: async ([id, revision]) => {
      if (!id) return;
      await openStream(decodeURIComponent(id), revision === undefined ? null : Number(revision));
    },
  },
  { name: 'projections', enter: refreshProjections, refresh: refreshProjections },
  { name: 'jobs', enter: refreshJobs, refresh: refreshJobs },
];

/** @type {View} */
let current = /** @type {View} */ (VIEWS[0]);

const route = async () => {
  stopPolling();
  clearNotice();
  signIn.hidden = true;
  const [name, ...args] = location.hash.replace(/^#/, '').split('/');
  current = VIEWS.find((view) => view.name === name) ?? current;
  for (const panel of document.querySelectorAll('[data-view-panel]')) {
    if (panel instanceof HTMLElement) panel.hidden = panel.dataset.viewPanel !== current.name;
  }
  for (const link of document.querySelectorAll('nav a[data-view]')) {
    if (link instanceof HTMLElement && link.dataset.view === current.name)
      link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  try {
    await current.enter(args);
    if (current.refresh) poll(current.refresh);
  } catch (error) {
    report(error);
  }
};

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && current.refresh && signIn.hidden) poll(current.refresh);
});
window.addEventListener('hashchange', () => void route());

signOut.hidden = storedCredential() === null;
void route();
