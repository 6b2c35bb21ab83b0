// @ts-check
// Files of an X archive this connector knows and leaves out, with the reason the import lists.

/** @type {Array<[RegExp, string]>} */
const KNOWN = [
  [/(^|\/)Your archive\.html$|(^|\/)assets\//, 'the archive\'s own viewer (a web page); the data files beside it are read'],
  [/(^|\/)manifest\.js$/, 'the archive\'s table of contents; the data files are found by name'],
  [/(^|\/)(account|account-creation-ip|account-suspension|account-timezone|ageinfo|contact|device-token|email-address-change|ip-audit|ni-devices|phone-number|screen-name-change|connected-application|key-registry|sso|verified|protected-history|login-verification)(-part\d+)?\.js$/,
    'holds contact details, IP addresses, devices or account settings: left out'],
  [/(^|\/)direct-messages?(-group)?-(headers|mediaUrls)(-part\d+)?\.js$/, 'the same conversations without their text; direct-messages*.js is read'],
  [/(^|\/)(ad-[\w-]+|personalization)(-part\d+)?\.js$/, 'advertising data (impressions, engagements, targeting): left out'],
  [/(^|\/)note-tweet(-part\d+)?\.js$/, 'the full text of long tweets: not imported yet (the tweets themselves are, with their shortened text)']
]

/**
 * Why a file of the archive is left out, for files this connector knows; undefined otherwise.
 * Any other `.js` data file (lists, blocks, mutes, moments, Spaces…) is known as X's but not imported yet.
 * @param {string} path
 * @returns {string | undefined}
 */
export function knownLeftOut (path) {
  for (const [pattern, reason] of KNOWN) if (pattern.test(path)) return reason
  if (/(^|\/)[a-z][\w-]*\.js$/.test(path)) return 'an X archive data file this connector does not import yet'
  return undefined
}
