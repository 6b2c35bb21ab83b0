// @ts-check
// Files of a Google Takeout or Maps Timeline export this connector knows and leaves out, with the reason.

/** @type {Array<[RegExp, string]>} */
const KNOWN = [
  [/(^|\/)Settings\.json$/, 'your devices\' names and ids and the history\'s settings: left out'],
  [/(^|\/)Timeline Edits\.json$/, 'edits Google made to its own timeline (device ids, place guesses): not imported'],
  [/(^|\/)archive_browser\.html$/, 'Takeout\'s index page'],
  [/(^|\/)Location History( \(Timeline\))?\//, 'a Location History file this connector does not import yet']
]

/**
 * Why a file of the export is left out, for files this connector knows; undefined otherwise.
 * @param {string} path
 * @returns {string | undefined}
 */
export function knownLeftOut (path) {
  for (const [pattern, reason] of KNOWN) if (pattern.test(path)) return reason
  return undefined
}
