import { useEffect, useState } from 'react';
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

/** A field to focus once the form has rendered its problem, and where in its text. */
export interface FocusRequest {
  element: HTMLElement | null;
  at?: { line: number; column: number } | null;
}

/**
 * A function that focuses a refused field after the render that lists its problem, so the field
 * is focused with its `aria-describedby` already naming the problem (a screen reader reads it).
 */
export function useFocusAfterRender(): (request: FocusRequest) => void {
  const [request, setRequest] = useState<FocusRequest | null>(null);
  useEffect(() => {
    const element = request?.element;
    if (!element) return;
    if (request.at && element instanceof HTMLTextAreaElement) selectSpot(element, request.at.line, request.at.column);
    else element.focus();
  }, [request]);
  return setRequest;
}
