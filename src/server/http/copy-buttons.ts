/**
 * Copy buttons, one definition for the dashboard (in its script file) and the hosted pages (inline, allowed by its
 * hash): the markup of a value to copy and the script that shows the buttons and copies. Without the script the
 * buttons stay hidden and the text stays selectable.
 */
import { html, type Html } from './html';

/** A block of text with a Copy button. `id` names the block, unique in the page. */
export function copyable(id: string, text: string, extraClass = ''): Html {
  return html`<div class="copyable ${extraClass}"><pre id="${id}">${text}</pre><button type="button" class="copy secondary" data-copy="${id}" hidden>Copy</button></div>`;
}

/** The styles of copyable(), for a page with the hosted pages' plain button style. */
export const COPYABLE_STYLE = `
.copyable { position: relative; }
.copyable pre { padding-right: 70px; user-select: all; }
.copyable button.copy { position: absolute; top: 6px; right: 6px; margin: 0; padding: 3px 8px; font-size: .8rem; }
`;

/**
 * Shows the Copy buttons and copies the text of the element a button names. On plain http (not localhost), where the
 * clipboard API is missing, it selects the text and copies the selection; if the browser refuses that too, the button
 * says so and the text stays selected.
 */
export const COPY_BUTTONS_SCRIPT = `
function cnvCopy(text, source) {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  // Plain http (not localhost) has no clipboard API: select the text and copy it the older way.
  var range = document.createRange();
  range.selectNodeContents(source);
  var selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  var done = document.execCommand('copy');
  return done ? Promise.resolve() : Promise.reject(new Error('copy refused'));
}
function cnvShowCopyButtons(root) {
  root.querySelectorAll('button[data-copy]').forEach(function (button) { button.hidden = false; });
}
cnvShowCopyButtons(document);
document.addEventListener('click', function (event) {
  var button = event.target.closest && event.target.closest('button[data-copy]');
  if (!button) return;
  var source = document.getElementById(button.getAttribute('data-copy'));
  if (!source) return;
  cnvCopy(source.textContent.trim(), source).then(function () {
    button.textContent = 'Copied';
  }, function () {
    button.textContent = 'Select and copy';
  });
  setTimeout(function () { button.textContent = 'Copy'; }, 2000);
});
`;
