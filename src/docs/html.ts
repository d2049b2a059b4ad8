/**
 * Escapes text for HTML and SVG, in content and in double-quoted attributes: everything the site
 * shows from the SQL project or the database goes through here (a column comment or a model's
 * SQL may hold `<`, `&` or quotes).
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);
}
