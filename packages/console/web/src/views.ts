/** The console's pages, each rendered from the latest ConsoleState as an HTML string. */
import type { ConsoleState, GroupView, TopicView } from '../../src/state.js';
import { PALETTE, lineChart } from './charts.js';
import { ago, bytes, clock, count, esc, ids, rate } from './format.js';

const firstBootstrap = (s: ConsoleState) => s.bootstrap.split(',')[0] ?? s.bootstrap;

function empty(testId: string, title: string, body: string): string {
  return `<div class="empty" data-testid="${testId}"><h2>${esc(title)}</h2>${body}</div>`;
}

const card = (label: string, value: string, o: { cls?: string; sub?: string; testId?: string } = {}) =>
  `<div class="card"><div class="label">${esc(label)}</div><div class="value ${o.cls ?? ''}"${o.testId ? ` data-testid="${o.testId}"` : ''}>${value}</div>${o.sub ? `<div class="sub">${o.sub}</div>` : ''}</div>`;

/** The cluster-unreachable state, shown instead of every page. */
export function errorView(s: ConsoleState): string {
  const e = s.error!;
  return `<div class="error" data-testid="error-state">
    <h2>Cluster unreachable</h2>
    <p data-testid="error-message">${esc(e.message)}</p>
    <p><strong>What to do:</strong> ${esc(e.hint).replace(/`([^`]+)`/g, '<code>$1</code>')}</p>
    <p class="muted">Failing since ${clock(e.since)} · last attempt ${clock(s.updatedAt)}${s.brokers.length > 0 ? ` · last known: ${s.brokers.length} brokers, ${s.counts.topics} topics` : ''}</p>
  </div>`;
}

export function connectingView(s: ConsoleState): string {
  return `<div class="empty" data-testid="connecting-state"><h2>Connecting to ${esc(s.bootstrap)}…</h2><p class="muted">The first poll of the cluster has not finished yet.</p></div>`;
}

export function overviewView(s: ConsoleState): string {
  if (s.brokers.length === 0) {
    return empty(
      'overview-empty',
      'No live brokers',
      `<p>The cluster answered but lists no live brokers. Start brokers (<code>npm start</code>) and check <code>npx samsa cluster status</code>.</p>`,
    );
  }
  const ctl = s.brokers.find((b) => b.isController);
  let html = `<h1>Cluster ${esc(s.clusterId ?? '')}</h1><div class="cards">`;
  html += card('Brokers', `${s.brokers.length}`, { testId: 'broker-count' });
  html += card('Controller', ctl ? `broker ${ctl.id}` : 'none', {
    cls: ctl ? '' : 'bad',
    testId: 'controller',
    sub: s.controllerEpoch !== null ? `<span data-testid="controller-epoch">epoch ${s.controllerEpoch}</span>` : 'epoch: no metrics',
  });
  html += card('Topics', count(s.counts.topics), { sub: `${count(s.counts.partitions)} partitions` });
  html += card('Offline partitions', count(s.counts.offline), { cls: s.counts.offline > 0 ? 'bad' : 'ok', testId: 'offline-count' });
  html += card('Under-replicated', count(s.counts.underReplicated), { cls: s.counts.underReplicated > 0 ? 'bad' : 'ok', testId: 'urp-count' });
  html += card('Consumer groups', count(s.groups.length));
  html +=
    '</div><h2>Brokers</h2><table data-testid="brokers"><tr><th>ID</th><th>Address</th><th>Rack</th><th>Role</th><th class="num">Leaders</th><th class="num">Replicas</th><th>Metrics</th></tr>';
  for (const b of s.brokers) {
    const m = s.metrics.find((e) => e.brokerId === b.id);
    const metrics = b.metricsUrl
      ? `<a href="${esc(b.metricsUrl)}/metrics">${esc(b.metricsUrl)}</a> ${m ? (m.ok ? '<span class="tag ok">up</span>' : `<span class="tag bad" title="${esc(m.error ?? '')}">down</span>`) : ''}`
      : '<span class="muted">none (metrics.port unset)</span>';
    html += `<tr data-broker="${b.id}"><td>${b.id}</td><td>${esc(b.host)}:${b.port}</td><td>${esc(b.rack ?? '–')}</td><td>${b.isController ? '<span class="tag ctl">controller</span>' : 'broker'}</td><td class="num">${b.leaderCount}</td><td class="num">${b.replicaCount}</td><td>${metrics}</td></tr>`;
  }
  html += '</table>';
  const recent = s.timeline.slice(0, 5);
  html += `<h2>Recent controller events</h2>${recent.length === 0 ? '<p class="muted">None since the console started.</p>' : timelineList(recent)}`;
  return html;
}

const userTopics = (s: ConsoleState) => s.topics.filter((t) => !t.internal);

export function topicsView(s: ConsoleState): string {
  const topics = s.topics;
  if (userTopics(s).length === 0) {
    return empty(
      'topics-empty',
      'No topics yet',
      `<p>Create one, then it appears here within a second:</p><pre>npx samsa topics --bootstrap-server ${esc(firstBootstrap(s))} --create --topic t1 --partitions 6 --replication-factor 3</pre>${topics.length > 0 ? `<p class="muted">Internal topics: ${topics.map((t) => esc(t.name)).join(', ')}</p>` : ''}`,
    );
  }
  let html =
    '<h1>Topics</h1><table data-testid="topics"><tr><th>Topic</th><th class="num">Partitions</th><th class="num">RF</th><th class="num">Offline</th><th class="num">Under-replicated</th><th class="num">Messages</th><th class="num">Size</th></tr>';
  for (const t of topics) {
    const offline = t.partitions.filter((p) => p.leader === null).length;
    const urp = t.partitions.filter((p) => p.isr.length < p.replicas.length).length;
    const msgs = t.partitions.reduce((a, p) => a + (p.endOffset !== null && p.startOffset !== null ? p.endOffset - p.startOffset : 0), 0);
    const size = t.partitions.some((p) => p.sizeBytes !== null) ? t.partitions.reduce((a, p) => a + (p.sizeBytes ?? 0), 0) : null;
    html += `<tr data-topic="${esc(t.name)}"><td><a href="#/topics/${encodeURIComponent(t.name)}">${esc(t.name)}</a>${t.internal ? ' <span class="tag">internal</span>' : ''}</td><td class="num">${t.partitions.length}</td><td class="num">${t.partitions[0]?.replicas.length ?? 0}</td><td class="num">${offline > 0 ? `<span class="tag bad">${offline}</span>` : 0}</td><td class="num">${urp > 0 ? `<span class="tag warn">${urp}</span>` : 0}</td><td class="num">${count(msgs)}</td><td class="num">${bytes(size)}</td></tr>`;
  }
  return html + '</table>';
}

export function partitionMapView(s: ConsoleState, name: string): string {
  const t: TopicView | undefined = s.topics.find((x) => x.name === name);
  if (!t)
    return empty(
      'topic-missing',
      `Topic ${name} not found`,
      `<p>It is not in the cluster's metadata (deleted, or not created yet). <a href="#/topics">All topics</a></p>`,
    );
  const brokerIds = [...new Set([...s.brokers.map((b) => b.id), ...t.partitions.flatMap((p) => p.replicas)])].sort((a, b) => a - b);
  const live = new Set(s.brokers.map((b) => b.id));
  let html = `<h1><a href="#/topics">Topics</a> / ${esc(t.name)}</h1>`;
  html += `<div class="legend"><span class="cell leader">L</span> leader <span class="cell follower">F</span> in-sync follower <span class="cell lagging">R</span> replica out of sync <span class="cell offline">×</span> replica on a dead broker / no leader</div>`;
  html += `<table data-testid="partition-map"><tr><th class="num">Partition</th><th class="num">Leader</th><th class="num">Epoch</th><th>Replicas</th><th>ISR</th>${brokerIds.map((b) => `<th class="num">b${b}${live.has(b) ? '' : ' (down)'}</th>`).join('')}<th class="num">Start offset</th><th class="num">End offset</th><th class="num">Messages</th><th class="num">Size</th></tr>`;
  for (const p of t.partitions) {
    const cells = brokerIds
      .map((b) => {
        if (!p.replicas.includes(b)) return '<td class="num"><span class="cell none"></span></td>';
        if (!live.has(b) || p.offline.includes(b)) return '<td class="num"><span class="cell offline">×</span></td>';
        if (p.leader === b) return '<td class="num"><span class="cell leader">L</span></td>';
        return `<td class="num"><span class="cell ${p.isr.includes(b) ? 'follower">F' : 'lagging">R'}</span></td>`;
      })
      .join('');
    const msgs = p.endOffset !== null && p.startOffset !== null ? p.endOffset - p.startOffset : null;
    const leader = p.leader === null ? '<span class="tag bad">none</span>' : String(p.leader);
    html += `<tr data-partition="${p.partition}"><td class="num">${p.partition}</td><td class="num" data-testid="leader">${leader}</td><td class="num">${p.leaderEpoch}</td><td>${ids(p.replicas)}</td><td data-testid="isr">${ids(p.isr)}${p.isr.length < p.replicas.length ? ' <span class="tag warn">under-replicated</span>' : ''}</td>${cells}<td class="num">${count(p.startOffset)}</td><td class="num">${count(p.endOffset)}</td><td class="num">${count(msgs)}</td><td class="num">${bytes(p.sizeBytes)}</td></tr>`;
  }
  return html + '</table><p class="muted">Sizes are the leader\'s log size from its metrics endpoint (kafka_log_log_size); offsets from ListOffsets.</p>';
}

export function groupsView(s: ConsoleState): string {
  if (s.groups.length === 0) {
    return empty(
      'groups-empty',
      'No consumer groups',
      `<p>Groups appear once a consumer with a group id joins or commits offsets, for example:</p><pre>kcat -b ${esc(firstBootstrap(s))} -G my-group t1</pre>`,
    );
  }
  let html =
    '<h1>Consumer groups</h1><table data-testid="groups"><tr><th>Group</th><th>State</th><th>Assignor</th><th class="num">Coordinator</th><th class="num">Members</th><th class="num">Lag</th><th>Lag (recent)</th></tr>';
  for (const g of s.groups) {
    const spark = lineChart([{ name: 'lag', color: PALETTE[0]!, points: s.lagHistory[g.groupId] ?? [] }], { width: 180, height: 36, spark: true });
    html += `<tr data-group="${esc(g.groupId)}"><td><a href="#/groups/${encodeURIComponent(g.groupId)}">${esc(g.groupId)}</a></td><td>${stateTag(g.state)}</td><td>${esc(g.assignor || '–')}</td><td class="num">${g.coordinator ?? '–'}</td><td class="num">${g.members.length}</td><td class="num">${count(g.totalLag)}</td><td>${spark}</td></tr>`;
  }
  return html + '</table>';
}

function stateTag(state: string): string {
  const cls = state === 'Stable' ? 'ok' : state === 'Dead' ? 'bad' : state === 'Empty' ? '' : 'warn';
  return `<span class="tag ${cls}">${esc(state)}</span>`;
}

export function groupView(s: ConsoleState, id: string): string {
  const g: GroupView | undefined = s.groups.find((x) => x.groupId === id);
  if (!g)
    return empty('group-missing', `Group ${id} not found`, `<p>The coordinators do not list it (deleted, or expired). <a href="#/groups">All groups</a></p>`);
  let html = `<h1><a href="#/groups">Consumer groups</a> / ${esc(g.groupId)} ${stateTag(g.state)}</h1>`;
  html += `<div class="cards">${card('Total lag', count(g.totalLag), { testId: 'lag-total' })}${card('Members', String(g.members.length))}${card('Coordinator', g.coordinator === null ? '–' : `broker ${g.coordinator}`)}</div>`;
  html += `<div class="chart"><div class="title">Lag over time <span class="now">messages behind the high watermark, summed over partitions</span></div>${lineChart([{ name: 'lag', color: PALETTE[0]!, points: s.lagHistory[g.groupId] ?? [] }], { width: 720, height: 220, format: rate, testId: 'lag-chart' })}</div>`;
  html += '<h2>Members</h2>';
  if (g.members.length === 0)
    html += `<p class="muted" data-testid="members-empty">No active members (group ${esc(g.state)}): only committed offsets are shown below. Start a consumer with group id <code>${esc(g.groupId)}</code> to see assignments.</p>`;
  else {
    html += '<table data-testid="members"><tr><th>Member</th><th>Client id</th><th>Host</th><th>Assignment</th></tr>';
    for (const m of g.members) {
      html += `<tr><td>${esc(m.memberId)}</td><td>${esc(m.clientId)}</td><td>${esc(m.host)}</td><td>${m.assignment.map((a) => `${esc(a.topic)}: ${a.partitions.join(', ')}`).join('<br>') || '–'}</td></tr>`;
    }
    html += '</table>';
  }
  html += '<h2>Partitions</h2>';
  if (g.partitions.length === 0) return html + '<p class="muted">No assigned or committed partitions.</p>';
  html +=
    '<table data-testid="group-partitions"><tr><th>Topic</th><th class="num">Partition</th><th class="num">Committed</th><th class="num">End offset</th><th class="num">Lag</th><th>Member</th></tr>';
  for (const p of g.partitions) {
    html += `<tr><td>${esc(p.topic)}</td><td class="num">${p.partition}</td><td class="num">${count(p.committed)}</td><td class="num">${count(p.endOffset)}</td><td class="num">${count(p.lag)}</td><td>${esc(p.clientId ?? '–')}</td></tr>`;
  }
  return html + '</table>';
}

const KIND_LABEL: Record<string, string> = {
  'broker-up': 'Broker up',
  'broker-down': 'Broker down',
  'controller-change': 'Controller',
  'leader-election': 'Leader election',
  'partition-offline': 'Offline',
  'isr-shrink': 'ISR shrink',
  'isr-expand': 'ISR expand',
  'topic-created': 'Topic created',
  'topic-deleted': 'Topic deleted',
  'partitions-added': 'Partitions added',
  'unclean-election': 'Unclean election',
  'reassignment-completed': 'Reassignment done',
};

const SOURCE_LABEL: Record<string, string> = { metadata: 'metadata', metrics: 'metrics', 'state-change': 'state-change log' };

function timelineList(events: ConsoleState['timeline']): string {
  return `<ul class="timeline" data-testid="timeline">${events
    .map(
      (e) =>
        `<li class="${esc(e.kind)}" data-kind="${esc(e.kind)}" data-source="${esc(e.source)}"><span class="time" title="${esc(new Date(e.at).toISOString())}">${clock(e.at)}</span><span class="kind">${esc(KIND_LABEL[e.kind] ?? e.kind)}<br><span class="src">${esc(SOURCE_LABEL[e.source] ?? e.source)}</span></span><span>${esc(e.message)}</span></li>`,
    )
    .join('')}</ul>`;
}

export function timelineView(s: ConsoleState, filter: string): string {
  if (s.timeline.length === 0) {
    return empty(
      'timeline-empty',
      'No controller events yet',
      `<p>Nothing has changed since the console started ${ago(s.startedAt)} (${clock(s.startedAt)}). Elections, ISR changes and brokers coming and going appear here as they happen; try stopping a broker, or <code>npx samsa leader-election --bootstrap-server ${esc(firstBootstrap(s))} --election-type PREFERRED --all-topic-partitions</code>.</p>`,
    );
  }
  const kinds = [...new Set(s.timeline.map((e) => e.kind))];
  const shown = filter ? s.timeline.filter((e) => e.kind === filter) : s.timeline;
  let html = `<h1>Controller event timeline</h1><div class="filters">Show: <a href="#/timeline">all (${s.timeline.length})</a>${kinds.map((k) => ` · <a href="#/timeline/${k}">${esc(KIND_LABEL[k] ?? k)}</a>`).join('')}</div>`;
  html += timelineList(shown);
  return (
    html +
    "<p class=\"muted\">Sources: <b>metadata</b> — successive metadata snapshots compared (one per poll); <b>state-change log</b> — the controller's decisions from each broker's GET /state-change; <b>metrics</b> — the controllers' unclean-election counters.</p>"
  );
}

export function throughputView(s: ConsoleState): string {
  if (s.metrics.length === 0) {
    return empty(
      'throughput-empty',
      'No metrics endpoints',
      `<p>Throughput comes from the brokers' Prometheus endpoints, and none is known. Give the brokers <code>metrics.port</code> (<code>npm start</code> does: 9404, 9405, …), or start the console with <code>--metrics-urls http://host:9404,…</code>.</p>`,
    );
  }
  const tp = s.throughput;
  if (tp.bytesIn.length === 0)
    return empty('throughput-collecting', 'Collecting…', '<p>Rates need two scrapes of each endpoint; the first chart point appears after the next poll.</p>');
  const last = (p: ReadonlyArray<readonly [number, number]>) => p.at(-1)?.[1] ?? 0;
  let html = '<h1>Throughput</h1>';
  html += `<div class="chart"><div class="title">Bytes in / out per second <span class="now">in ${bytes(last(tp.bytesIn))}/s · out ${bytes(last(tp.bytesOut))}/s</span></div>${lineChart(
    [
      { name: 'bytes in', color: PALETTE[0]!, points: tp.bytesIn },
      { name: 'bytes out', color: PALETTE[1]!, points: tp.bytesOut },
    ],
    { format: (v) => bytes(v), testId: 'bytes-chart' },
  )}</div>`;
  html += `<div class="chart"><div class="title">Messages in per second <span class="now">${rate(last(tp.messagesIn))}/s</span></div>${lineChart([{ name: 'messages in', color: PALETTE[2]!, points: tp.messagesIn }], { format: rate, testId: 'messages-chart' })}</div>`;
  if (tp.topics.length > 0) {
    html +=
      '<h2>Per topic (now)</h2><table><tr><th>Topic</th><th class="num">Bytes in/s</th><th class="num">Bytes out/s</th><th class="num">Messages in/s</th></tr>';
    for (const t of tp.topics)
      html += `<tr><td>${esc(t.topic)}</td><td class="num">${bytes(t.bytesIn)}</td><td class="num">${bytes(t.bytesOut)}</td><td class="num">${rate(t.messagesIn)}</td></tr>`;
    html += '</table>';
  }
  html += '<h2>Endpoints</h2><table><tr><th>Broker</th><th>URL</th><th>Scrape</th></tr>';
  for (const e of s.metrics)
    html += `<tr><td>${e.brokerId ?? '–'}</td><td>${esc(e.url)}/metrics</td><td>${e.ok ? '<span class="tag ok">ok</span>' : `<span class="tag bad">${esc(e.error ?? 'failed')}</span>`}</td></tr>`;
  return (
    html +
    '</table><p class="muted">Rates of kafka_server_brokertopicmetrics_{bytesin,bytesout,messagesin}_total between successive scrapes, summed over brokers.</p>'
  );
}
