/**
 * The console's front end: one EventSource on /api/events (the server pushes the whole state after
 * every poll), a hash router, and a re-render of the current page on each update.
 */
import type { ConsoleState } from '../../src/state.js';
import { esc } from './format.js';
import { connectingView, errorView, groupView, groupsView, overviewView, partitionMapView, throughputView, timelineView, topicsView } from './views.js';

let state: ConsoleState | null = null;
let serverLost = false;

const main = document.getElementById('main')!;
const conn = document.getElementById('conn')!;

function route(): { page: string; arg: string } {
  const parts = location.hash.replace(/^#\/?/, '').split('/');
  return { page: parts[0] || 'overview', arg: decodeURIComponent(parts.slice(1).join('/')) };
}

function render(): void {
  const { page, arg } = route();
  for (const a of document.querySelectorAll<HTMLAnchorElement>('nav a')) a.classList.toggle('active', a.dataset['nav'] === page);
  if (serverLost) {
    conn.textContent = 'console server unreachable';
    conn.className = 'conn bad';
  } else if (state) {
    conn.textContent = state.status === 'ok' ? `live · ${state.bootstrap}` : state.status === 'unreachable' ? 'cluster unreachable' : 'connecting…';
    conn.className = `conn ${state.status === 'ok' ? 'ok' : state.status === 'unreachable' ? 'bad' : ''}`;
  }
  let html: string;
  if (serverLost) {
    html = `<div class="error" data-testid="server-lost"><h2>Lost the console server</h2><p>This page gets its data from the <code>samsa console</code> process (or the broker with <code>console.port</code>) at ${esc(location.host)}, which does not answer.</p><p><strong>What to do:</strong> check that it is still running, or start it again with <code>npx samsa console --bootstrap-server ${esc(state?.bootstrap ?? 'host:9092')}</code>. This page reconnects by itself.</p></div>`;
  } else if (!state) html = '<p class="muted">Loading…</p>';
  else if (state.status === 'unreachable') html = errorView(state);
  else if (state.status === 'connecting') html = connectingView(state);
  else if (page === 'topics') html = arg ? partitionMapView(state, arg) : topicsView(state);
  else if (page === 'groups') html = arg ? groupView(state, arg) : groupsView(state);
  else if (page === 'timeline') html = timelineView(state, arg);
  else if (page === 'throughput') html = throughputView(state);
  else html = overviewView(state);
  main.innerHTML = html;
  main.dataset['updated'] = String(state?.updatedAt ?? 0);
}

function connect(): void {
  const es = new EventSource('/api/events');
  es.addEventListener('state', (ev) => {
    state = JSON.parse((ev as MessageEvent<string>).data) as ConsoleState;
    serverLost = false;
    render();
  });
  es.onerror = () => {
    // EventSource reconnects by itself (retry: 2000); say so while it cannot
    if (es.readyState !== EventSource.OPEN) {
      serverLost = true;
      render();
    }
  };
}

window.addEventListener('hashchange', render);
render();
connect();
