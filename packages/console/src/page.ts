/**
 * The console's page and stylesheet, kept in the module so a built package needs nothing but dist/
 * (the Docker image copies only package.json and dist). The script is web/src/app.ts → dist/web.
 */

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Samsa console</title>
<link rel="stylesheet" href="/style.css">
</head>
<body>
<header>
  <div class="brand">Samsa <span>console</span></div>
  <nav>
    <a href="#/overview" data-nav="overview">Overview</a>
    <a href="#/topics" data-nav="topics">Topics</a>
    <a href="#/groups" data-nav="groups">Consumer groups</a>
    <a href="#/timeline" data-nav="timeline">Timeline</a>
    <a href="#/throughput" data-nav="throughput">Throughput</a>
  </nav>
  <div class="conn" id="conn" data-testid="connection">connecting…</div>
</header>
<main id="main" data-testid="main"><p class="muted">Loading…</p></main>
<script type="module" src="/js/app.js"></script>
</body>
</html>
`;

export const PAGE_CSS = `
:root { --bg:#f5f6f8; --card:#fff; --ink:#1d2330; --muted:#687083; --line:#dde1e8; --accent:#2f6fde;
  --ok:#1f9d55; --warn:#d98b00; --bad:#d0342c; --leader:#2f6fde; --follower:#8fb3f0; --lagging:#f3c16b; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color:var(--ink); background:var(--bg); }
header { display:flex; align-items:center; gap:24px; padding:10px 24px; background:#18202e; color:#fff; }
.brand { font-weight:700; font-size:18px; letter-spacing:.3px; } .brand span { font-weight:400; opacity:.7; }
nav { display:flex; gap:4px; flex:1; }
nav a { color:#c8d0de; text-decoration:none; padding:6px 12px; border-radius:6px; }
nav a:hover { background:#263146; color:#fff; } nav a.active { background:#2f6fde; color:#fff; }
.conn { font-size:12px; padding:4px 10px; border-radius:12px; background:#3a4457; white-space:nowrap; }
.conn.ok { background:#1f7a47; } .conn.bad { background:#a8322b; }
main { padding:20px 24px 40px; max-width:1400px; }
h1 { font-size:20px; margin:0 0 14px; } h2 { font-size:16px; margin:22px 0 10px; }
.muted { color:var(--muted); }
.cards { display:flex; flex-wrap:wrap; gap:12px; margin-bottom:8px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:12px 16px; min-width:150px; }
.card .label { color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.4px; }
.card .value { font-size:26px; font-weight:600; margin-top:2px; }
.card .value.bad { color:var(--bad); } .card .value.ok { color:var(--ok); }
.card .sub { color:var(--muted); font-size:12px; }
table { border-collapse:collapse; background:var(--card); border:1px solid var(--line); border-radius:8px; overflow:hidden; min-width:50%; }
th, td { text-align:left; padding:6px 12px; border-bottom:1px solid var(--line); white-space:nowrap; }
th { background:#eef1f5; font-weight:600; font-size:12px; color:#444c5c; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
tr:last-child td { border-bottom:none; }
a { color:var(--accent); }
.tag { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px; background:#e7ecf5; color:#334; }
.tag.ok { background:#dcf3e5; color:#17663a; } .tag.warn { background:#fdf0d5; color:#8a5a00; } .tag.bad { background:#fadcda; color:#9b231d; }
.tag.ctl { background:#2f6fde; color:#fff; }
.cell { display:inline-block; width:30px; height:22px; line-height:22px; text-align:center; border-radius:4px; font-size:12px; font-weight:600; }
.cell.leader { background:var(--leader); color:#fff; } .cell.follower { background:var(--follower); color:#102a55; }
.cell.lagging { background:var(--lagging); color:#5a3b00; } .cell.offline { background:var(--bad); color:#fff; } .cell.none { background:transparent; }
.legend { display:flex; gap:14px; align-items:center; margin:8px 0 12px; color:var(--muted); font-size:12px; }
.legend .cell { width:22px; height:16px; line-height:16px; font-size:10px; }
.empty, .error { background:var(--card); border:1px dashed #b9c1cf; border-radius:8px; padding:22px 24px; max-width:900px; }
.empty h2, .error h2 { margin-top:0; }
.error { border:1px solid #e3a6a2; background:#fff6f5; }
.error h2 { color:var(--bad); }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size:13px; }
pre { background:#f0f2f6; padding:8px 12px; border-radius:6px; overflow:auto; }
.chart { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:10px 12px; margin:0 12px 12px 0; display:inline-block; vertical-align:top; }
.chart .title { font-weight:600; margin-bottom:4px; } .chart .now { color:var(--muted); font-size:12px; margin-left:6px; font-weight:400; }
.chart svg text { font-size:11px; fill:#687083; }
.timeline { list-style:none; padding:0; margin:0; max-width:1100px; }
.timeline li { background:var(--card); border:1px solid var(--line); border-left:4px solid var(--muted); border-radius:6px; padding:8px 12px; margin-bottom:6px; display:flex; gap:14px; }
.timeline li .time { color:var(--muted); font-variant-numeric:tabular-nums; min-width:70px; }
.timeline li .kind { min-width:130px; } .timeline li .src { color:var(--muted); font-size:11px; }
.timeline li.broker-down, .timeline li.partition-offline, .timeline li.unclean-election { border-left-color:var(--bad); }
.timeline li.broker-up, .timeline li.isr-expand { border-left-color:var(--ok); }
.timeline li.leader-election, .timeline li.controller-change { border-left-color:var(--accent); }
.timeline li.isr-shrink { border-left-color:var(--warn); }
.filters { margin-bottom:12px; display:flex; gap:10px; align-items:center; }
.grid2 { display:flex; flex-wrap:wrap; gap:20px; align-items:flex-start; }
`;
