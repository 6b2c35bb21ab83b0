// @ts-check
// Files of a Google Takeout or Maps Timeline export this connector knows and leaves out, with the reason.

/**
 * Checked in order; the first match gives the reason (skipKnownFiles in ../_shared/read.js).
 * @type {import('../_shared/read.js').KnownFile[]}
 */
export const KNOWN_FILES = [
  { pattern: /(^|\/)Settings\.json$/, reason: 'your devices\' names and ids and the history\'s settings: left out' },
  { pattern: /(^|\/)Timeline Edits\.json$/, reason: 'edits Google made to its own timeline (device ids, place guesses): not imported' },
  { pattern: /(^|\/)archive_browser\.html$/, reason: 'Takeout\'s index page' },
  // Records.json is read, or listed with how to ask for it, by index.js
  { pattern: /(^|\/)Location History( \(Timeline\))?\/(?!(Records|Location History)\.json$)/, reason: 'a Location History file this connector does not import yet' }
]

