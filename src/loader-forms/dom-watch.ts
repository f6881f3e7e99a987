/** Watching the page for a tool's success markup (a confirmation rendered, a success block shown). */
import { guard } from '../loader/guard';

/**
 * Calls check with every element added under the document or whose `style`/`class` changed, in document order per
 * batch (MutationObserver batches per microtask, so a tool's whole re-render arrives at once). Returns stop.
 */
export function watchElements(doc: Document, win: Window, check: (element: Element) => void): () => void {
  const Observer = (win as unknown as { MutationObserver?: typeof MutationObserver }).MutationObserver;
  if (!Observer) return () => {};
  const observer = new Observer(
    guard((records: MutationRecord[]) => {
      for (const record of records) {
        if (record.type === 'attributes') {
          if (record.target.nodeType === 1) check(record.target as Element);
          continue;
        }
        for (const node of Array.from(record.addedNodes)) {
          if (node.nodeType !== 1) continue;
          check(node as Element);
          for (const inner of Array.from((node as Element).querySelectorAll('*'))) check(inner);
        }
      }
    }),
  );
  observer.observe(doc.documentElement, { childList: true, subtree: true, attributes: true, attributeFilter: ['style', 'class'] });
  return () => observer.disconnect();
}
