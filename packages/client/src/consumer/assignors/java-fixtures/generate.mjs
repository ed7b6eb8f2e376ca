#!/usr/bin/env node
// Generates assignor scenarios (one per line, the format Harness.java reads) with a seeded PRNG:
//   node generate.mjs [count] [seed] > scenarios.txt
// Line: assignor|topic=partitions,...|member/member/...
//   member = memberId;groupInstanceId or -;topics,...;owned "t:p t:p";subscription generation;member-data generation or -
const count = Number(process.argv[2] ?? 400);
let seed = Number(process.argv[3] ?? 11);
const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
const int = (n) => Math.floor(rnd() * n);
const pick = (a) => a[int(a.length)];
const hex = (n) => Array.from({ length: n }, () => '0123456789abcdef'[int(16)]).join('');
const lines = [];
for (let s = 0; s < count; s++) {
  const assignor = pick(['sticky', 'sticky', 'cooperative-sticky', 'cooperative-sticky', 'cooperative-sticky', 'range', 'roundrobin']);
  const nTopics = 1 + int(4);
  const topics = Array.from({ length: nTopics }, (_, i) => (rnd() < 0.5 ? `t${i}` : `topic-${hex(3)}`));
  const parts = Object.fromEntries(topics.map((t) => [t, 1 + int(9)]));
  const nMembers = 1 + int(7);
  const equal = rnd() < 0.55;
  const members = Array.from({ length: nMembers }, (_, i) => ({
    id: rnd() < 0.8 ? `consumer-${1 + int(9)}-${hex(8)}-${hex(4)}-${hex(4)}` : `m${i}`,
    instance: rnd() < 0.2 ? `inst-${hex(2)}` : '-',
    topics: equal ? [...topics] : topics.filter(() => rnd() < 0.6),
    owned: [],
    subGen: -1,
    mdGen: '-',
  }));
  const all = topics.flatMap((t) => Array.from({ length: parts[t] }, (_, p) => `${t}:${p}`));
  const mode = pick(['fresh', 'balanced-minus', 'balanced-minus', 'random', 'random-conflicts', 'grow']);
  const gen = 1 + int(20);
  if (mode !== 'fresh') {
    // a previous owner for each partition: round-robin over the members (some later "leave" or are "new")
    const prevOwners = members.filter(() => mode === 'random' || mode === 'random-conflicts' || rnd() < 0.8);
    all.forEach((tp, i) => {
      if (prevOwners.length === 0) return;
      const owner = mode.startsWith('random') ? pick(prevOwners) : prevOwners[i % prevOwners.length];
      if (mode === 'grow' && rnd() < 0.3) return; // new partitions nobody owned
      owner.owned.push(tp);
      if (mode === 'random-conflicts' && rnd() < 0.15) pick(members).owned.push(tp);
    });
    for (const m of members) {
      const g = m.owned.length === 0 && rnd() < 0.5 ? -1 : mode === 'random-conflicts' ? gen - int(3) : gen - (rnd() < 0.15 ? 1 : 0);
      if (assignor === 'sticky') {
        m.mdGen = g < 0 ? '-' : String(g);
        m.subGen = rnd() < 0.5 ? -1 : g;
      } else {
        if (rnd() < 0.7) m.subGen = g;
        else m.mdGen = g < 0 ? '-' : String(g);
      }
    }
  }
  const line = members.map((m) => [m.id, m.instance, m.topics.join(','), [...new Set(m.owned)].join(' '), m.subGen, m.mdGen].join(';')).join('/');
  lines.push(`${assignor}|${topics.map((t) => `${t}=${parts[t]}`).join(',')}|${line}`);
}
console.log(lines.join('\n'));
