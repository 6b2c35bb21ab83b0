// @ts-check
// Files of an X archive this connector knows and leaves out, with the reason the import lists.

/**
 * Checked in order; the first match gives the reason (skipKnownFiles in ../_shared/read.js).
 * @type {import('../_shared/read.js').KnownFile[]}
 */
export const KNOWN_FILES = [
  { pattern: /(^|\/)Your archive\.html$|(^|\/)assets\//, reason: 'the archive\'s own viewer (a web page); the data files beside it are read' },
  { pattern: /(^|\/)manifest\.js$/, reason: 'the archive\'s table of contents; the data files are found by name' },
  { pattern: /(^|\/)(account|account-creation-ip|account-suspension|account-timezone|ageinfo|contact|device-token|email-address-change|ip-audit|ni-devices|phone-number|screen-name-change|connected-application|key-registry|sso|verified|protected-history|login-verification)(-part\d+)?\.js$/, reason: 'holds contact details, IP addresses, devices or account settings: left out' },
  { pattern: /(^|\/)direct-messages?(-group)?-(headers|mediaUrls)(-part\d+)?\.js$/, reason: 'the same conversations without their text; direct-messages*.js is read' },
  { pattern: /(^|\/)(ad-[\w-]+|personalization)(-part\d+)?\.js$/, reason: 'advertising data (impressions, engagements, targeting): left out' },
  { pattern: /(^|\/)note-tweet(-part\d+)?\.js$/, reason: 'the full text of long tweets: not imported yet (the tweets themselves are, with their shortened text)' },
  { pattern: /(^|\/)[a-z][\w-]*\.js$/, reason: 'an X archive data file this connector does not import yet' }
]

