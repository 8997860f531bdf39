import { offsetOf } from './json-text.js';

/**
 * Focuses `textarea` with the caret at 1-based `line` and `column` (the character there
 * selected) and scrolls that line into view: where a parse error or a YAML problem is.
 */
export function selectSpot(textarea: HTMLTextAreaElement | null, line: number, column: number): void {
  if (!textarea) return;
  const offset = offsetOf(textarea.value, line, column);
  textarea.focus();
  textarea.setSelectionRange(offset, Math.min(offset + 1, textarea.value.length));
  const style = getComputedStyle(textarea);
  const lineHeight = Number.parseFloat(style.lineHeight) || Number.parseFloat(style.fontSize) * 1.4 || 18;
  textarea.scrollTop = Math.max(0, (line - 1) * lineHeight - textarea.clientHeight / 3);
}
