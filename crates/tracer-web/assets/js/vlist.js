// A virtualized list of fixed-height rows: only the rows in view (plus a margin) are in the DOM.

export class VList {
  /**
   * scroller: an element that scrolls (overflow: auto) and holds nothing else.
   * render(index) returns the row element; onRange(first, last) is told which rows are drawn.
   */
  constructor(scroller, { rowHeight, count = 0, render, margin = 12, onRange = null, headerHeight = 0 }) {
    this.headerHeight = headerHeight;
    this.scroller = scroller;
    this.rowHeight = rowHeight;
    this.count = count;
    this.renderRow = render;
    this.margin = margin;
    this.onRange = onRange;
    this.rows = new Map();
    this.spacer = document.createElement('div');
    this.spacer.className = 'vlist-spacer';
    scroller.appendChild(this.spacer);
    scroller.classList.add('vlist');
    this.pending = false;
    this.onScroll = () => this.schedule();
    scroller.addEventListener('scroll', this.onScroll, { passive: true });
    this.resizer = new ResizeObserver(() => this.schedule());
    this.resizer.observe(scroller);
    this.sizeSpacer();
    this.draw();
  }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.draw();
    });
  }

  sizeSpacer() {
    this.spacer.style.height = `${this.count * this.rowHeight}px`;
  }

  /** The rows drawn now: [first, last] inclusive, or null when none are. */
  range() {
    const height = this.scroller.clientHeight;
    if (this.count === 0 || height === 0) return null;
    const top = Math.max(0, this.scroller.scrollTop - this.headerHeight);
    const first = Math.max(0, Math.floor(top / this.rowHeight) - this.margin);
    const last = Math.min(this.count - 1, Math.ceil((top + height) / this.rowHeight) + this.margin);
    return first <= last ? [first, last] : null;
  }

  draw(force = false) {
    const range = this.range();
    if (force) {
      for (const el of this.rows.values()) el.remove();
      this.rows.clear();
    }
    if (!range) {
      for (const el of this.rows.values()) el.remove();
      this.rows.clear();
      return;
    }
    const [first, last] = range;
    for (const [index, el] of this.rows) {
      if (index < first || index > last) {
        el.remove();
        this.rows.delete(index);
      }
    }
    for (let i = first; i <= last; i++) {
      if (this.rows.has(i)) continue;
      const el = this.renderRow(i);
      el.classList.add('vrow');
      el.style.top = `${i * this.rowHeight}px`;
      el.style.height = `${this.rowHeight}px`;
      this.spacer.appendChild(el);
      this.rows.set(i, el);
    }
    if (this.onRange) this.onRange(first, last);
  }

  /** Redraws every drawn row (after the data changed). */
  refresh() {
    this.draw(true);
  }

  /** Redraws one row if it is drawn. */
  refreshIndex(index) {
    const old = this.rows.get(index);
    if (!old) return;
    const el = this.renderRow(index);
    el.classList.add('vrow');
    el.style.top = `${index * this.rowHeight}px`;
    el.style.height = `${this.rowHeight}px`;
    old.replaceWith(el);
    this.rows.set(index, el);
  }

  setCount(count) {
    this.count = count;
    this.sizeSpacer();
    this.draw(true);
  }

  setRowHeight(rowHeight) {
    if (rowHeight === this.rowHeight) return;
    const index = Math.floor(this.scroller.scrollTop / this.rowHeight);
    this.rowHeight = rowHeight;
    this.sizeSpacer();
    this.scroller.scrollTop = index * rowHeight;
    this.draw(true);
  }

  /** Scrolls so that row index is in view (align: 'auto' moves as little as it can). */
  scrollToIndex(index, align = 'auto') {
    if (index < 0 || index >= this.count) return;
    const top = this.headerHeight + index * this.rowHeight;
    const bottom = top + this.rowHeight;
    const view = this.scroller.clientHeight;
    const now = this.scroller.scrollTop;
    if (align === 'center') this.scroller.scrollTop = Math.max(0, top - (view - this.rowHeight) / 2);
    else if (top - this.headerHeight < now) this.scroller.scrollTop = top - this.headerHeight;
    else if (bottom > now + view) this.scroller.scrollTop = bottom - view;
    this.draw();
  }

  /** True when the last row is in view (for following a growing list). */
  atEnd() {
    const s = this.scroller;
    return s.scrollTop + s.clientHeight >= s.scrollHeight - this.rowHeight;
  }

  scrollToEnd() {
    this.scroller.scrollTop = this.scroller.scrollHeight;
    this.draw();
  }

  destroy() {
    this.scroller.removeEventListener('scroll', this.onScroll);
    this.resizer.disconnect();
    this.spacer.remove();
    this.rows.clear();
  }
}

/** A row height in px read from a CSS custom property of el (so phone widths can differ). */
export function cssRowHeight(el, name, fallback) {
  const v = parseFloat(getComputedStyle(el).getPropertyValue(name));
  return Number.isFinite(v) && v > 0 ? v : fallback;
}
