/** Inline SVG line charts: time on x, values on y, one path per series. */
import { esc } from './format.js';

export interface Series {
  name: string;
  color: string;
  points: ReadonlyArray<readonly [number, number]>;
}

export interface ChartOptions {
  width?: number;
  height?: number;
  /** Formats y-axis labels. */
  format?: (v: number) => string;
  testId?: string;
  /** A sparkline: no axes, grid or labels. */
  spark?: boolean;
}

/** A "nice" upper bound for the y axis (1, 2, 5 × 10^n). */
export function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

const clock = (t: number) => new Date(t).toTimeString().slice(0, 8);

export function lineChart(series: readonly Series[], o: ChartOptions = {}): string {
  const W = o.width ?? 520;
  const H = o.height ?? 200;
  const spark = o.spark === true;
  const L = spark ? 2 : 58;
  const R = spark ? 4 : 10;
  const T = spark ? 4 : 10;
  const B = spark ? 4 : 26;
  const fmt = o.format ?? ((v: number) => String(Math.round(v)));
  const all = series.flatMap((s) => s.points);
  const test = o.testId ? ` data-testid="${esc(o.testId)}"` : '';
  if (all.length === 0) {
    return `<svg width="${W}" height="${H}"${test} data-points="0"><text x="${W / 2}" y="${H / 2 + 4}" text-anchor="middle" font-size="11" fill="#687083">no data yet</text></svg>`;
  }
  const t0 = Math.min(...all.map((p) => p[0]));
  const t1 = Math.max(...all.map((p) => p[0]), t0 + 1000);
  const yMax = niceMax(Math.max(...all.map((p) => p[1])));
  const x = (t: number) => L + ((t - t0) / (t1 - t0)) * (W - L - R);
  const y = (v: number) => T + (1 - v / yMax) * (H - T - B);
  let out = `<svg width="${W}" height="${H}" viewBox="0 0 ${W} ${H}"${test} data-points="${all.length}" data-last="${series[0]?.points.at(-1)?.[1] ?? ''}">`;
  if (spark) out += `<line x1="${L}" x2="${W - R}" y1="${y(0)}" y2="${y(0)}" stroke="#e6e9ef"/>`;
  for (let i = 0; i <= 4 && !spark; i++) {
    const v = (yMax * i) / 4;
    out += `<line x1="${L}" x2="${W - R}" y1="${y(v)}" y2="${y(v)}" stroke="#e6e9ef"/>`;
    out += `<text x="${L - 6}" y="${y(v) + 4}" text-anchor="end">${esc(fmt(v))}</text>`;
  }
  if (!spark) out += `<text x="${L}" y="${H - 8}">${clock(t0)}</text><text x="${W - R}" y="${H - 8}" text-anchor="end">${clock(t1)}</text>`;
  for (const s of series) {
    if (s.points.length === 0) continue;
    const d = s.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(' ');
    out += `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2" data-series="${esc(s.name)}"/>`;
    const last = s.points[s.points.length - 1]!;
    out += `<circle cx="${x(last[0]).toFixed(1)}" cy="${y(last[1]).toFixed(1)}" r="3" fill="${s.color}"/>`;
  }
  out += '</svg>';
  if (series.length > 1) {
    out += `<div class="legend">${series.map((s) => `<span><svg width="14" height="4"><rect width="14" height="4" fill="${s.color}"/></svg> ${esc(s.name)}</span>`).join('')}</div>`;
  }
  return out;
}

export const PALETTE = ['#2f6fde', '#1f9d55', '#d98b00', '#9b4dca', '#d0342c', '#0f9fb0', '#6b7280'];
