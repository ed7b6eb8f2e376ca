// Figures go to stdout, one line each (`name: value unit (comparison)`), and into results.json;
// progress goes to stderr.

export function log(msg) {
  process.stderr.write(`[bench] ${msg}\n`);
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function round(x, digits = 1) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export class Report {
  constructor() {
    this.figures = [];
    this.details = {};
  }

  /**
   * One figure: `value` in `unit`; `reference` ({ name, value, unit }) and `ratio` (value/reference)
   * when it is compared with a baseline measured in the same run; `text` is the printed comparison;
   * `line`, when given, is printed instead of `name: value unit (text)`.
   */
  figure({ name, value, unit, reference, ratio, text, line, digits = 1, ...extra }) {
    const f = {
      name,
      value: round(value, digits),
      unit,
      ...(reference ? { reference: { ...reference, value: round(reference.value, digits) } } : {}),
      ...(ratio !== undefined ? { ratio: round(ratio, 3) } : {}),
      ...extra,
    };
    this.figures.push(f);
    process.stdout.write(`${line ?? `${name}: ${f.value} ${unit}${text ? ` (${text})` : ''}`}\n`);
    return f;
  }

  detail(bench, data) {
    this.details[bench] = data;
  }
}
