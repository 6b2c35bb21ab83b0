// @ts-check
// Files of a Reddit export this connector knows and leaves out, with the reason the import lists.

/**
 * Checked in order; the first match gives the reason (skipKnownFiles in ../_shared/read.js).
 * @type {import('../_shared/read.js').KnownFile[]}
 */
export const KNOWN_FILES = [
  { pattern: /(^|\/)(ip_logs|statistics|linked_identities|linked_phone_number|birthdate|account_gender|user_preferences|sensitive_ads_preferences|twitter|persona|checkfile)\.csv$/, reason: 'holds IP addresses, contact details or account settings: left out' },
  { pattern: /(^|\/)(post|comment)_headers\.csv$/, reason: 'the same posts or comments without their text; posts.csv and comments.csv are read' },
  { pattern: /(^|\/)(messages|messages_archive|message_headers|messages_archive_headers|chat_history)\.csv$/, reason: 'private messages and chats: not imported yet' },
  { pattern: /(^|\/)(purchases|subscriptions|payouts|gilded_content|gold_received|stripe|reddit_gold_information)\.csv$/, reason: 'payments and Reddit Premium: left out' },
  { pattern: /(^|\/)[a-z][a-z0-9_]*\.csv$/, reason: 'a Reddit export file this connector does not import yet' }
]

