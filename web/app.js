// Baton's dashboard, the last of its scripts: the session (a token exchanged once for an
// HttpOnly cookie) and the router from the URL's #fragment to a view.
'use strict';

function renderLogin(message) {
  stopFollowing();
  document.getElementById('who').textContent = '';
  document.getElementById('logout').hidden = true;
  const input = el('input', {type: 'password', name: 'token', autocomplete: 'off',
                             placeholder: 'bt_…', 'aria-label': 'token'});
  const note = el('p', {class: 'error', id: 'login-error'}, message || '');
  const form = el('form', {class: 'login', id: 'login', onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      session = await api('POST', '/api/v1/session', {token: input.value.trim()});
      input.value = '';
      start();
    } catch (e) {
      note.textContent = e.message;
    }
  }},
  el('h1', {}, 'Baton'),
  el('p', {class: 'muted'}, 'Give a token (baton token create, or the credentials file). ' +
     'It is exchanged for a session cookie; the page never keeps it.'),
  input, el('button', {class: 'primary', type: 'submit'}, 'Log in'), note);
  show(generation, form);
  input.focus();
}

function parseHash() {
  const h = location.hash.replace(/^#/, '') || '/overview';
  const [path, query] = h.split('?');
  return {parts: path.split('/').filter(Boolean).map(decodeURIComponent),
          params: new URLSearchParams(query || '')};
}

async function route() {
  if (!session) return renderLogin();
  const gen = ++generation;
  const {parts, params} = parseHash();
  for (const a of document.querySelectorAll('header nav a')) {
    a.classList.toggle('current', a.getAttribute('href') === '#/' + (parts[0] || 'overview'));
  }
  if (parts[0] !== 'executions' || parts[1]) bulkMessage = null;
  try {
    if (parts[0] === 'executions' && parts[1]) return await renderExecution(parts[1], params, gen);
    if (parts[0] === 'executions') return await renderExecutions(params, gen);
    if (parts[0] === 'workflows' && parts[1]) return await renderWorkflow(parts[1], params, gen);
    if (parts[0] === 'workflows') return await renderWorkflows(gen);
    if (parts[0] === 'workers') return await renderWorkers(gen);
    if (parts[0] === 'dlq') return await renderDeadLetters(gen);
    if (parts[0] === 'resources') return await renderResources(gen);
    return await renderOverview(gen);
  } catch (e) {
    if (e instanceof Stale || e.status === 401 || gen !== generation) return;
    show(gen, el('p', {class: 'error', id: 'view-error'}, e.message));
  }
}

async function start() {
  try {
    session = await api('GET', '/api/v1/session');
  } catch (e) {
    session = null;
  }
  const who = document.getElementById('who');
  const logout = document.getElementById('logout');
  if (!session) return renderLogin();
  who.textContent = session.namespace + (session.can_write ? '' : ' (read only)');
  logout.hidden = false;
  route();
}

document.getElementById('logout').addEventListener('click', async () => {
  await api('DELETE', '/api/v1/session').catch(() => {});
  session = null;
  renderLogin();
});
window.addEventListener('hashchange', () => route());
start();
