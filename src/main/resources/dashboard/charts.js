// A small SVG line chart: a sliding window of samples per series, scaled to the largest value seen
// in the window. No library: the page must work offline and under a 'self'-only CSP, so colours and
// dashes come from classes in dashboard.css, never from inline styles.

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 400;
const HEIGHT = 160;
const PAD_LEFT = 34;
const PAD_BOTTOM = 14;

function el(name, attrs, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) {
    node.setAttribute(k, v);
  }
  if (parent) {
    parent.appendChild(node);
  }
  return node;
}

/** 1, 2, 5 times a power of ten: a round axis maximum at or above {@code value}. */
function niceMax(value) {
  if (!(value > 0)) {
    return 1;
  }
  const magnitude = Math.pow(10, Math.floor(Math.log10(value)));
  for (const step of [1, 2, 5, 10]) {
    if (step * magnitude >= value) {
      return step * magnitude;
    }
  }
  return 10 * magnitude;
}

function label(value) {
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1).replace(/\.0$/, '') : String(+value.toPrecision(2));
}

export class LineChart {
  /**
   * @param svg     the <svg> element to draw into
   * @param series  [{key, cls}]: one line each, styled by the CSS class
   * @param points  samples kept per series (the window)
   */
  constructor(svg, series, points) {
    this.svg = svg;
    this.series = series;
    this.points = points;
    this.samples = new Map(series.map((s) => [s.key, []]));
    el('line', { x1: PAD_LEFT, y1: HEIGHT - PAD_BOTTOM, x2: WIDTH, y2: HEIGHT - PAD_BOTTOM, class: 'axis' }, svg);
    el('line', { x1: PAD_LEFT, y1: 0, x2: PAD_LEFT, y2: HEIGHT - PAD_BOTTOM, class: 'axis' }, svg);
    el('line', { x1: PAD_LEFT, y1: (HEIGHT - PAD_BOTTOM) / 2, x2: WIDTH, y2: (HEIGHT - PAD_BOTTOM) / 2, class: 'grid' }, svg);
    this.maxLabel = el('text', { x: PAD_LEFT - 4, y: 10, class: 'tick', 'text-anchor': 'end' }, svg);
    this.midLabel = el('text', { x: PAD_LEFT - 4, y: (HEIGHT - PAD_BOTTOM) / 2 + 4, class: 'tick', 'text-anchor': 'end' }, svg);
    el('text', { x: PAD_LEFT - 4, y: HEIGHT - PAD_BOTTOM, class: 'tick', 'text-anchor': 'end' }, svg).textContent = '0';
    this.windowLabel = el('text', { x: PAD_LEFT + 2, y: HEIGHT - 2, class: 'tick' }, svg);
    this.lines = new Map(series.map((s) => [s.key, el('polyline', { class: 'line ' + s.cls, points: '' }, svg)]));
  }

  /** Appends one sample per series (null or undefined: a gap in that line). */
  push(values) {
    for (const s of this.series) {
      const list = this.samples.get(s.key);
      const v = values[s.key];
      list.push(typeof v === 'number' && isFinite(v) ? v : null);
      if (list.length > this.points) {
        list.shift();
      }
    }
    this.render();
  }

  render() {
    let max = 0;
    for (const list of this.samples.values()) {
      for (const v of list) {
        if (v !== null && v > max) {
          max = v;
        }
      }
    }
    const top = niceMax(max);
    this.maxLabel.textContent = label(top);
    this.midLabel.textContent = label(top / 2);
    this.windowLabel.textContent = 'last ' + this.points + ' samples';
    const plotHeight = HEIGHT - PAD_BOTTOM - 2;
    const dx = (WIDTH - PAD_LEFT) / Math.max(1, this.points - 1);
    for (const s of this.series) {
      const list = this.samples.get(s.key);
      const offset = this.points - list.length; // newest sample at the right edge
      const coords = [];
      list.forEach((v, i) => {
        if (v !== null) {
          const x = PAD_LEFT + (offset + i) * dx;
          const y = HEIGHT - PAD_BOTTOM - (v / top) * plotHeight;
          coords.push(x.toFixed(1) + ',' + y.toFixed(1));
        }
      });
      this.lines.get(s.key).setAttribute('points', coords.join(' '));
    }
  }
}
