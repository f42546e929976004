// Baton's dashboard: what steps share — circuit breakers (with a manual reset), pools
// of slots, and the cache of step results.
'use strict';

function countOf(v) {
  return Array.isArray(v) ? v.length : (typeof v === 'number' ? v : 0);
}

async function renderResources(gen) {
  const [breakers, pools, cache] = await Promise.all([
    api('GET', '/api/v1/breakers').catch(() => ({breakers: []})),
    api('GET', '/api/v1/pools').catch(() => ({pools: []})),
    api('GET', '/api/v1/cache?limit=' + PAGE).catch(() => ({entries: [], total: 0, bytes: 0})),
  ]);
  show(gen, el('h1', {}, 'Breakers, pools and cache'),
       el('h2', {}, 'Circuit breakers'),
       table('breakers', ['Key', 'State', 'Failures', 'Trips', 'Next probe', 'Last error', ''],
         breakers.breakers.map((b) => el('tr', {'data-breaker': b.key},
           el('td', {class: 'mono'}, b.key), el('td', {}, statusBadge(b.state)),
           el('td', {}, b.failures + ' / ' + b.failure_threshold), el('td', {}, b.trips),
           el('td', {}, b.state === 'open' ? when(b.probe_at) : ''),
           el('td', {class: 'error'}, b.last_error && b.last_error.message ? b.last_error.message : ''),
           el('td', {}, canWrite() && b.state !== 'closed' ? el('button', {class: 'reset', onclick: async () => {
             if (!confirm('Close breaker ' + b.key + ' now? Its steps run again at once.')) return;
             await api('POST', '/api/v1/breakers/' + encodeURIComponent(b.key) + '/reset', {})
               .catch((e) => alert(e.message));
             route();
           }}, 'Reset') : null))),
         'No circuit breaker has been used yet (a step\'s `breaker:` makes one).'),
       el('h2', {}, 'Pools'),
       table('pools', ['Pool', 'In use', 'Waiting', 'Updated'], pools.pools.map((p) => el('tr', {'data-pool': p.name},
         el('td', {class: 'mono'}, p.name), el('td', {}, progressBar(p.slots ? 100 * p.used / p.slots : 0),
                                                     ' ' + p.used + ' of ' + p.slots),
         el('td', {}, countOf(p.waiting)), el('td', {}, when(p.updated_at)))),
         'No pools (baton pool create NAME --slots N).'),
       el('h2', {}, 'Cached step results'),
       el('p', {class: 'muted', id: 'cache-total'}, cache.total + (cache.total === 1 ? ' entry, ' : ' entries, ') + cache.bytes + ' bytes' +
          (cache.total > cache.entries.length ? '; the ' + cache.entries.length + ' newest:' : '')),
       table('cache', ['Workflow / step', 'From', 'Hits', 'Bytes', 'Created', 'Expires'],
         cache.entries.map((c) => el('tr', {},
           el('td', {class: 'mono'}, c.workflow + '/' + c.step_id),
           el('td', {class: 'mono'}, c.execution_id ? el('a', {href: executionLink(c.execution_id, c.step_id)}, c.execution_id) : ''),
           el('td', {}, c.hits), el('td', {}, c.bytes), el('td', {}, when(c.created_at)),
           el('td', {}, c.expires_at ? when(c.expires_at) : 'never'))),
         'Nothing cached (a step\'s `cache:` keeps its results).'));
  every(5000);
}
