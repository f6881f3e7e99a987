/**
 * Live sections, one definition for the dashboard's script and the demo's: swapping in a section's fresh markup keeps
 * the keyboard focus where it was, and a live region says the section's summary line when that changes.
 * Plain ES5 in a string, inserted into each page script (never inline: the hosted pages have no live section).
 */

/**
 * Defines cnvSwapKeepingFocus(root, markup) and cnvAnnounceSummary(root).
 *
 * cnvSwapKeepingFocus replaces root's content with `markup` unless it is the same (returns whether it swapped). When
 * the focus was inside, it goes back to the same control: the one with the same id, else the same kind with the same
 * link and text, else the one at the same place among root's focusable elements, else root itself.
 *
 * cnvAnnounceSummary says, in a visually hidden role="status" region of its own (made empty at the end of the page on
 * the first call, so it is there before it changes), the text of root's [data-live-summary] lines whenever it
 * changes; the rest of the section is never read out.
 */
export const LIVE_SWAP_SCRIPT = `
var CNV_FOCUSABLE = 'a[href], button, input, select, textarea, summary, [tabindex]';
function cnvSwapKeepingFocus(root, markup) {
  var fresh = document.createElement(root.tagName);
  fresh.innerHTML = markup;
  if (fresh.innerHTML === root.innerHTML) return false;
  var active = document.activeElement;
  var was = null;
  if (active && active !== root && root.contains(active)) {
    was = { id: active.id, tag: active.tagName, href: active.getAttribute('href'), text: active.textContent,
      index: Array.prototype.indexOf.call(root.querySelectorAll(CNV_FOCUSABLE), active) };
  }
  root.innerHTML = fresh.innerHTML;
  if (!was) return true;
  var after = Array.prototype.slice.call(root.querySelectorAll(CNV_FOCUSABLE));
  var target = was.id ? document.getElementById(was.id) : null;
  if (target && !root.contains(target)) target = null;
  if (!target) target = after.filter(function (el) { return el.tagName === was.tag && el.getAttribute('href') === was.href && el.textContent === was.text; })[0] || null;
  if (!target) target = after[Math.min(was.index, after.length - 1)] || null;
  if (!target) { root.setAttribute('tabindex', '-1'); target = root; }
  target.focus({ preventScroll: true });
  return true;
}
function cnvAnnounceSummary(root) {
  var text = Array.prototype.map.call(root.querySelectorAll('[data-live-summary]'), function (line) {
    return line.textContent.replace(/\\s+/g, ' ').trim();
  }).join(' ');
  var region = root.cnvLiveStatus;
  if (!region) {
    region = document.createElement('div');
    region.className = 'visually-hidden';
    region.setAttribute('role', 'status');
    // At the end of the page, out of the section's card: nothing reads the same words twice beside the line itself.
    document.body.appendChild(region);
    root.cnvLiveStatus = region;
    region.cnvSaid = text;
    return;
  }
  if (text && text !== region.cnvSaid) {
    region.cnvSaid = text;
    region.textContent = text;
  }
}
`;
