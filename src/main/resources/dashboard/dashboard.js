// The dashboard's panels: /tiers polled every second for counts, latency and queues; /adaptive and
// /tenants every few seconds; GET /events streamed for the feed, threshold changes, recalibrations
// and misroute figures. Text only ever goes in through textContent: event data is not trusted HTML.

import { askToken, call, getJson, onAuthChange, problemText, setToken, streamEvents } from './api.js';
import { LineChart } from './charts.js';

const TIERS_POLL_MS = 1000;
const SLOW_POLL_MS = 5000;
const CHART_POINTS = 120;
const FEED_MAX = 300;
const RECALIBRATIONS_MAX = 50;
const KNOWN_TYPES = ['request', 'threshold', 'recalibration', 'reload'];
const MISROUTE_KINDS = ['strict', 'banded', 'gross'];
const TIER_NAMES = ['nano', 'small', 'large'];
const SOURCES = {
  api: 'API (PATCH /thresholds)',
  kernel: 'kernel loop (adaptive recalibration)',
  external: 'external (bpftool or another map writer)',
  state_file: 'state file (restored at start)',
};

const $ = (id) => document.getElementById(id);

function text(id, value) {
  $(id).textContent = value;
}

function make(tag, content, cls) {
  const node = document.createElement(tag);
  if (content !== undefined && content !== null) {
    node.textContent = content;
  }
  if (cls) {
    node.className = cls;
  }
  return node;
}

function fixed(value, digits) {
  return typeof value === 'number' && isFinite(value) ? value.toFixed(digits) : '—';
}

function percent(rate) {
  return typeof rate === 'number' && isFinite(rate) ? (100 * rate).toFixed(1) + ' %' : '—';
}

function clock() {
  return new Date().toLocaleTimeString([], { hour12: false });
}

// --- tiers: table and charts ---------------------------------------------------------------------

const charts = {
  rate: new LineChart($('chart-rate'), TIER_NAMES.map((t) => ({ key: t, cls: 't-' + t })), CHART_POINTS),
  latency: new LineChart($('chart-latency'), TIER_NAMES.flatMap((t) => [
    { key: t + '-p50', cls: 't-' + t },
    { key: t + '-p99', cls: 't-' + t + ' p99' },
  ]), CHART_POINTS),
  queue: new LineChart($('chart-queue'), TIER_NAMES.map((t) => ({ key: t, cls: 't-' + t })), CHART_POINTS),
};

/** Per tier, the previous poll's cumulative count, for the rate. */
const previousCounts = new Map();
/** Per assigned tier, misroute tallies from request events (used when /tiers carries none). */
const eventMisroutes = new Map();
const rows = new Map();

function tierRow(tier) {
  let row = rows.get(tier);
  if (!row) {
    row = make('tr');
    row.appendChild(make('th', tier, 't-' + tier));
    for (const col of ['requests', 'rate', 'p50', 'p99', 'queue', ...MISROUTE_KINDS.map((k) => 'misroute-' + k)]) {
      const cell = make('td', '—');
      cell.id = col + '-' + tier;
      row.appendChild(cell);
    }
    $('tier-rows').appendChild(row);
    rows.set(tier, row);
  }
  return row;
}

/** Completed requests so far: the data plane's latency timer, else the pool's answer count. */
function requestCount(t) {
  if (t.latency && typeof t.latency.count === 'number') {
    return t.latency.count;
  }
  return t.pool && typeof t.pool.completed === 'number' ? t.pool.completed : null;
}

function misrouteRates(t) {
  const m = t.misroutes;
  if (m && typeof m === 'object') {
    return { source: 'GET /tiers', rates: Object.fromEntries(MISROUTE_KINDS.map((k) => [k, m[k + '_rate']])) };
  }
  const tally = eventMisroutes.get(t.tier);
  if (tally && tally.assessed > 0) {
    return { source: 'request events', rates: Object.fromEntries(MISROUTE_KINDS.map((k) => [k, tally[k] / tally.assessed])) };
  }
  return null;
}

function showTiers(body, now) {
  text('mode', body.mode || '—');
  showThresholds(body.thresholds);
  const rate = {};
  const latency = {};
  const queue = {};
  let misrouteSource = null;
  for (const t of body.tiers || []) {
    tierRow(t.tier);
    const count = requestCount(t);
    const before = previousCounts.get(t.tier);
    let perSecond = null;
    if (count !== null && before && now > before.at) {
      perSecond = Math.max(0, count - before.count) / ((now - before.at) / 1000);
    }
    previousCounts.set(t.tier, { count, at: now });
    rate[t.tier] = perSecond;
    latency[t.tier + '-p50'] = t.latency ? t.latency.p50_ms : null;
    latency[t.tier + '-p99'] = t.latency ? t.latency.p99_ms : null;
    queue[t.tier] = t.pool ? t.pool.queue_depth : null;

    text('requests-' + t.tier, count === null ? '—' : String(count));
    text('rate-' + t.tier, fixed(perSecond, 1));
    text('p50-' + t.tier, fixed(latency[t.tier + '-p50'], 2));
    text('p99-' + t.tier, fixed(latency[t.tier + '-p99'], 2));
    text('queue-' + t.tier, t.pool ? t.pool.queue_depth + ' / ' + t.pool.queue_capacity : '—');
    const misroutes = misrouteRates(t);
    for (const k of MISROUTE_KINDS) {
      text('misroute-' + k + '-' + t.tier, misroutes ? percent(misroutes.rates[k]) : '—');
    }
    misrouteSource = misrouteSource || (misroutes && misroutes.source);
  }
  text('misroute-source', misrouteSource
    ? 'Misroute rates: share of assessed answers per assigned tier, from ' + misrouteSource + '.'
    : 'Misroute rates: — (this router reports no misroute figures).');
  charts.rate.push(rate);
  charts.latency.push(latency);
  charts.queue.push(queue);
}

// --- thresholds ----------------------------------------------------------------------------------

let formDirty = false;

function showThresholds(t) {
  if (!t) {
    return;
  }
  text('nano-max', t.nano_max);
  text('small-max', t.small_max);
  const warning = $('thresholds-warning');
  if (t.valid === false) {
    warning.hidden = false;
    warning.textContent = 'The stored thresholds are invalid' + (t.invalid ? ' (' + t.invalid.field + ': ' + t.invalid.detail + ')' : '')
      + (t.effective ? '; in effect: ' + t.effective.nano_max + ' / ' + t.effective.small_max : '');
  } else {
    warning.hidden = true;
  }
  // Never under the operator's hands: a refresh between clearing a field and typing into it
  // would write the old value back and the typed digits would follow it ("60" + "100").
  const editing = document.activeElement && document.activeElement.tagName === 'INPUT'
    && $('thresholds-form').contains(document.activeElement);
  if (!formDirty && !editing) {
    $('nano-max-input').value = t.nano_max;
    $('small-max-input').value = t.small_max;
  }
}

function pair(t) {
  return t ? t.nano_max + ' / ' + t.small_max : '?';
}

function showThresholdEvent(event) {
  const d = event.data;
  text('threshold-source', SOURCES[d.source] || d.source || '—');
  text('threshold-change', pair(d.old) + ' → ' + pair(d.new) + ', event #' + event.id + ', seen ' + clock());
  showThresholds(d.new ? Object.assign({ valid: d.valid }, d.new, d.invalid ? { invalid: d.invalid, effective: d.effective } : {}) : null);
}

async function applyThresholds(e) {
  e.preventDefault();
  const result = $('thresholds-result');
  const patch = {
    nano_max: Number($('nano-max-input').value),
    small_max: Number($('small-max-input').value),
  };
  result.className = 'note';
  result.textContent = 'applying…';
  try {
    const response = await call('PATCH', '/thresholds', patch);
    if (response.ok) {
      const now = await response.json();
      formDirty = false;
      result.textContent = 'applied: ' + pair(now) + ' (' + clock() + ')';
      showThresholds(now);
    } else {
      result.className = 'warning';
      result.textContent = 'refused: ' + await problemText(response);
    }
  } catch (err) {
    result.className = 'warning';
    result.textContent = 'not applied: ' + err.message;
  }
}

// --- adaptive loop and recalibrations ------------------------------------------------------------

const recalibrationsSeen = new Set();

function addRecalibration(r) {
  const key = String(r.timestamp_ns);
  if (recalibrationsSeen.has(key)) {
    return;
  }
  recalibrationsSeen.add(key);
  const body = $('recalibrations');
  body.querySelectorAll('tr.empty').forEach((n) => n.remove());
  const row = make('tr');
  const when = typeof r.timestamp_ns === 'number' && r.timestamp_ns > 1e17
    ? new Date(r.timestamp_ns / 1e6).toLocaleTimeString([], { hour12: false }) : clock();
  row.appendChild(make('td', when));
  row.appendChild(make('td', r.old_nano_max + ' → ' + r.new_nano_max));
  row.appendChild(make('td', fixed(r.p95_ms, 2)));
  row.appendChild(make('td', r.samples));
  body.prepend(row);
  while (body.children.length > RECALIBRATIONS_MAX) {
    body.lastChild.remove();
  }
}

function showAdaptive(a) {
  text('adaptive-state', a.enabled ? 'running: lowers nano_max while nano P95 exceeds '
    + a.nano_target_p95_ms + ' ms' : 'disabled');
  const dl = $('adaptive-details');
  dl.replaceChildren();
  const s = a.status || {};
  const items = [
    ['period', a.period_ms + ' ms'], ['target P95', a.nano_target_p95_ms + ' ms'], ['step', a.step],
    ['floor', a.floor], ['ceiling', a.ceiling || 'off'], ['min samples', a.min_samples],
    ['ticks', s.ticks], ['recalibrations', s.recalibrations], ['last P95', fixed(s.last_p95_ms, 2) + ' ms'],
    ['last samples', s.last_samples],
    ['token gain', s.token_gain === undefined ? undefined : fixed(s.token_gain, 4) + (a.calibrate ? '' : ' (frozen)')],
    ['calibrations', s.calibrations],
  ];
  for (const [k, v] of items) {
    dl.appendChild(make('dt', k));
    dl.appendChild(make('dd', v === undefined || v === null ? '—' : String(typeof v === 'object' ? JSON.stringify(v) : v)));
  }
  if (s.last_recalibration) {
    addRecalibration(s.last_recalibration);
  }
}

async function pollAdaptive() {
  try {
    showAdaptive(await getJson('/adaptive'));
  } catch (e) {
    $('adaptive-details').replaceChildren();
    text('adaptive-state', e.status === 409
      ? 'Not available: the router classifies in user space (no kernel loop).'
      : 'GET /adaptive failed: ' + e.message);
  }
}

// --- tenants -------------------------------------------------------------------------------------

async function pollTenants() {
  const body = $('tenants');
  try {
    const list = (await getJson('/tenants')).tenants || [];
    listedTenants = list.map((t) => t.id);
    body.replaceChildren();
    if (list.length === 0) {
      const row = make('tr', null, 'empty');
      const cell = make('td', 'no tenants');
      cell.colSpan = 3;
      row.appendChild(cell);
      body.appendChild(row);
    }
    for (const t of list) {
      const row = make('tr');
      row.appendChild(make('td', t.id));
      row.appendChild(make('td', t.prefix));
      row.appendChild(make('td', t.floor, 't-' + t.floor));
      body.appendChild(row);
    }
  } catch (e) {
    body.replaceChildren();
    const row = make('tr', null, 'empty');
    const cell = make('td', 'GET /tenants failed: ' + e.message);
    cell.colSpan = 3;
    row.appendChild(cell);
    body.appendChild(row);
  }
}

// --- tenant limits -------------------------------------------------------------------------------

const LIMITS_SHOWN = 20;
let listedTenants = [];

/** A limit as the panel shows it: the share enforced here, and the whole limit when a fleet splits it. */
function limitCell(view, field) {
  const whole = view.limits[field];
  if (whole === undefined) {
    return '—';
  }
  const here = view.enforced_here[field];
  return here === whole ? String(whole) : here + ' of ' + whole;
}

async function limitsRow(id) {
  const row = make('tr');
  row.appendChild(make('td', id));
  try {
    const [view, usage] = await Promise.all([
      getJson('/tenants/' + encodeURIComponent(id) + '/limits'),
      getJson('/tenants/' + encodeURIComponent(id) + '/usage')]);
    row.appendChild(make('td', view.source));
    for (const f of ['requests_per_minute', 'tokens_per_minute', 'max_concurrent', 'tokens_per_day']) {
      row.appendChild(make('td', limitCell(view, f)));
    }
    row.appendChild(make('td', String(usage.requests)));
    row.appendChild(make('td', String(usage.prompt_tokens)));
    row.appendChild(make('td', String(usage.completion_tokens)));
    const refused = Object.entries(usage.refusals).filter(([, n]) => n > 0).map(([k, n]) => k + ' ' + n);
    row.appendChild(make('td', refused.length ? refused.join(', ') : '0'));
  } catch (e) {
    const cell = make('td', 'failed: ' + e.message);
    cell.colSpan = 9;
    row.appendChild(cell);
  }
  return row;
}

async function pollLimits() {
  const body = $('limits');
  const typed = $('limits-tenant').value.trim();
  const ids = [];
  if (typed && $('limits-tenant').checkValidity()) {
    ids.push(typed);
  }
  for (const id of listedTenants) {
    if (ids.length > LIMITS_SHOWN) {
      break;
    }
    if (!ids.includes(id)) {
      ids.push(id);
    }
  }
  const rows = await Promise.all(ids.map(limitsRow));
  body.replaceChildren(...rows);
}

// --- event feed ----------------------------------------------------------------------------------

const held = [];

function summary(type, d) {
  switch (type) {
    case 'request': {
      const misroute = d.misroute ? MISROUTE_KINDS.filter((k) => d.misroute[k]) : [];
      return d.endpoint + ' → ' + d.assigned_tier
        + (d.observed_tier && d.observed_tier !== d.assigned_tier ? ' (needed ' + d.observed_tier + ')' : '')
        + ', score ' + d.score + ' by ' + d.route_source + ', ' + d.status + ', '
        + fixed(d.latency_us / 1000, 1) + ' ms' + (d.tenant ? ', tenant ' + d.tenant : '')
        + (misroute.length ? ', misroute: ' + misroute.join('+') : '');
    }
    case 'threshold':
      return (d.source || '?') + ': ' + pair(d.old) + ' → ' + pair(d.new) + (d.valid === false ? ' (invalid)' : '');
    case 'recalibration':
      return 'nano_max ' + d.old_nano_max + ' → ' + d.new_nano_max + ' (P95 ' + fixed(d.p95_ms, 2) + ' ms over '
        + d.samples + ' samples)';
    case 'calibration':
      return 'token gain ' + fixed(d.old_gain, 4) + ' → ' + fixed(d.new_gain, 4) + ' (' + d.samples + ' samples: '
        + d.true_tokens + ' true vs ' + fixed(d.estimate_tokens, 1) + ' estimated tokens)';
    case 'reload':
      return 'programs swapped' + (d.object ? ' from ' + d.object : '');
    case 'gap':
      return 'missed ' + d.missed + ' events (' + d.reason + ')';
    default:
      return JSON.stringify(d);
  }
}

function feedFilter() {
  const types = new Set([...document.querySelectorAll('#feed-filter input[name=type]:checked')].map((i) => i.value));
  const needle = $('feed-text').value.trim().toLowerCase();
  return (li) => types.has(KNOWN_TYPES.includes(li.dataset.type) ? li.dataset.type : 'other')
    && (needle === '' || li.textContent.toLowerCase().includes(needle));
}

function applyFeedFilter() {
  const visible = feedFilter();
  let shown = 0;
  const items = $('feed').children;
  for (const li of items) {
    li.hidden = !visible(li);
    shown += li.hidden ? 0 : 1;
  }
  text('feed-count', shown + ' of ' + items.length + ' shown' + (held.length ? ', ' + held.length + ' held (paused)' : ''));
}

function addToFeed(event) {
  const li = make('li', null, 'ev ev-' + event.type);
  li.dataset.type = event.type;
  li.appendChild(make('span', event.id === null ? '' : '#' + event.id, 'ev-id'));
  li.appendChild(make('span', event.type, 'ev-type'));
  li.appendChild(make('span', summary(event.type, event.data), 'ev-text'));
  li.hidden = !feedFilter()(li);
  const feed = $('feed');
  feed.prepend(li);
  while (feed.children.length > FEED_MAX) {
    feed.lastChild.remove();
  }
}

function onEvent(event) {
  if (event.type === 'threshold') {
    showThresholdEvent(event);
  } else if (event.type === 'recalibration') {
    addRecalibration(event.data);
  } else if (event.type === 'request' && event.data.misroute && event.data.assigned_tier) {
    const tally = eventMisroutes.get(event.data.assigned_tier) || { assessed: 0, strict: 0, banded: 0, gross: 0 };
    tally.assessed++;
    MISROUTE_KINDS.forEach((k) => { tally[k] += event.data.misroute[k] ? 1 : 0; });
    eventMisroutes.set(event.data.assigned_tier, tally);
  }
  if ($('feed-pause').checked) {
    held.push(event);
    if (held.length > FEED_MAX) {
      held.shift();
    }
  } else {
    addToFeed(event);
  }
  applyFeedFilter();
}

// --- wiring --------------------------------------------------------------------------------------

function every(ms, task) {
  const run = async () => {
    try {
      await task();
    } finally {
      setTimeout(run, ms); // after the answer: a slow router never gets overlapping polls
    }
  };
  run();
}

function start() {
  onAuthChange((has) => text('auth-state', has ? 'token set' : 'no token'));
  $('token-button').addEventListener('click', () => askToken('Enter the control-plane token.', true).catch(() => {}));
  $('forget-token').addEventListener('click', () => setToken(null));
  $('thresholds-form').addEventListener('submit', applyThresholds);
  $('thresholds-form').addEventListener('input', () => { formDirty = true; });
  $('thresholds-form').addEventListener('change', () => { formDirty = true; }); // a cleared field fires change, not input
  $('feed-filter').addEventListener('input', applyFeedFilter);
  $('feed-filter').addEventListener('submit', (e) => e.preventDefault());
  $('feed-pause').addEventListener('change', () => {
    if (!$('feed-pause').checked) {
      held.splice(0).forEach(addToFeed);
      applyFeedFilter();
    }
  });
  every(TIERS_POLL_MS, async () => {
    try {
      showTiers(await getJson('/tiers'), performance.now());
      text('api-state', 'ok');
    } catch (e) {
      text('api-state', 'GET /tiers: ' + e.message);
    }
  });
  every(SLOW_POLL_MS, pollAdaptive);
  every(SLOW_POLL_MS, pollTenants);
  every(SLOW_POLL_MS, pollLimits);
  $('limits-form').addEventListener('submit', (e) => { e.preventDefault(); pollLimits(); });
  streamEvents(onEvent, (state) => text('stream-state', state));
}

start();
