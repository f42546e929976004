// Baton's dashboard, part 2: the REST API and the live feed.
'use strict';

let live = null;  // the WebSocket of the current view
let refreshTimer = 0;
let reconnectTimer = 0;

class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error && body.error.message) || ('HTTP ' + status));
    this.status = status;
  }
}

// Same-origin fetch with the session cookie; writes carry X-Baton-Csrf, which the server
// requires of cookie-authenticated writes (another site's page cannot add it).
async function api(method, path, body) {
  const headers = {'X-Baton-Csrf': '1'};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, {
    method, headers, credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
  if (r.status === 401 && path !== '/api/v1/session') {
    session = null;
    renderLogin('Your session ended; give a token again.');
    throw new ApiError(401, data);
  }
  if (!r.ok) throw new ApiError(r.status, data);
  return data;
}

// The live feed of the current view (`key` names what it follows): `onChange` gets each
// event, and null once the feed is ready (anything that happened between the view's
// fetch and the feed's start is then fetched again). A view drawn again with the same
// key keeps its feed; another key closes it.
let liveKey = '';
let liveHandler = null;
function follow(key, query, onChange) {
  liveHandler = onChange;
  if (live && liveKey === key) return;
  stopFollowing();
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(scheme + '//' + location.host + '/api/v1/events' + query);
  ws.onmessage = (m) => {
    let e;
    try { e = JSON.parse(m.data); } catch (err) { return; }
    if (live !== ws || !liveHandler) return;
    liveHandler(e.type === 'ready' || e.type === 'gap' ? null : e);
  };
  // A feed that drops (a restart, a proxy's idle timeout) is opened again after a pause,
  // and the view read again: the view never goes stale without a sign.
  ws.onclose = () => {
    if (live !== ws) return;  // closed on purpose
    live = null;
    liveKey = '';
    clearTimeout(reconnectTimer);
    reconnectTimer = setTimeout(() => { reconnectTimer = 0; route(); }, 2000);
  };
  live = ws;
  liveKey = key;
}

function stopFollowing() {
  const ws = live;
  live = null;
  liveKey = '';
  if (ws) ws.close();
  clearTimeout(refreshTimer);
  refreshTimer = 0;
  clearTimeout(reconnectTimer);
  reconnectTimer = 0;
}

// Runs `fn` 300 ms after the first call since the last run: a burst of events redraws
// once, and a steady stream of them redraws about three times a second.
function soon(fn) {
  if (refreshTimer) return;
  refreshTimer = setTimeout(() => { refreshTimer = 0; fn(); }, 300);
}

// A view without events (workers, the overview) is read again every `ms` while shown.
function every(ms) {
  stopFollowing();
  refreshTimer = setTimeout(() => { refreshTimer = 0; route(); }, ms);
}
