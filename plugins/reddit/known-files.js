// @ts-check
// Files of a Reddit export this connector knows and leaves out, with the reason the import lists.

/** @type {Array<[RegExp, string]>} */
const KNOWN = [
  [/(^|\/)(ip_logs|statistics|linked_identities|linked_phone_number|birthdate|account_gender|user_preferences|sensitive_ads_preferences|twitter|persona|checkfile)\.csv$/,
    'holds IP addresses, contact details or account settings: left out'],
  [/(^|\/)(post|comment)_headers\.csv$/, 'the same posts or comments without their text; posts.csv and comments.csv are read'],
  [/(^|\/)(messages|messages_archive|message_headers|messages_archive_headers|chat_history)\.csv$/, 'private messages and chats: not imported yet'],
  [/(^|\/)(purchases|subscriptions|payouts|gilded_content|gold_received|stripe|reddit_gold_information)\.csv$/, 'payments and Reddit Premium: left out']
]

/**
 * Why a file of the export is left out, for files this connector knows; undefined otherwise.
 * Any other CSV (hidden posts, multireddits, moderated subreddits, drafts…) is known as Reddit's but not imported yet.
 * @param {string} path
 * @returns {string | undefined}
 */
export function knownLeftOut (path) {
  for (const [pattern, reason] of KNOWN) if (pattern.test(path)) return reason
  if (/(^|\/)[a-z][a-z0-9_]*\.csv$/.test(path)) return 'a Reddit export file this connector does not import yet'
  return undefined
}
