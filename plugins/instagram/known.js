// @ts-check
// The files of an Instagram export the connector knows and leaves out on purpose, with why, so
// that only files it truly does not know ask the user to report a layout. Applied after the
// reading to what was not opened (skipKnownFiles), so a rule never hides a file that was read.
// Folder names are those of the 2023, 2024 and 2025–2026 layouts (English accounts).

/** @type {import('../_shared/read.js').KnownFile[]} */
export const KNOWN_UNUSED = [
  { pattern: /(^|\/)(start_here|index)\.html$/, reason: "the export's own index page" },
  { pattern: /(^|\/)(ads_information|ads_and_businesses|ads_and_topics|your_topics|instagram_ads_and_businesses)\//, reason: 'advertising data (ads seen and clicked, interests Meta inferred): left out' },
  { pattern: /(^|\/)(apps_and_websites_off_of_instagram|apps_and_websites|off_meta_activity|your_activity_off_meta_technologies)\//, reason: 'activity other apps and websites reported to Meta: left out' },
  { pattern: /(^|\/)(security_and_login_information|login_and_account_creation|login_and_profile_creation|device_information)\//, reason: 'logins, devices and IP addresses: left out' },
  { pattern: /(^|\/)(contacts|synced_contacts)[^/]*(\/|\.json$)/, reason: "your phone's contacts (other people's phone numbers and e-mails): left out" },
  { pattern: /(^|\/)personal_information\/(information_about_you|account_information|profile_changes|personal_information\/(account_information|profile_changes|instagram_profile_information|account_privacy_changes|professional_information|note_interactions))/, reason: 'account details (e-mail, phone, places Meta inferred): left out' },
  { pattern: /(^|\/)personal_information\/[^/]*\.json$/, reason: 'account details (e-mail, phone, places Meta inferred): left out' },
  { pattern: /(^|\/)(logged_information|recent_searches|searches|link_history|past_instagram_insights|your_instagram_activity\/other_activity)\//, reason: 'searches, links opened and insights: not imported yet' },
  { pattern: /(^|\/)(preferences|settings|notifications|information_you've_submitted_to_advertisers)\//, reason: 'app settings: not imported' },
  { pattern: /(^|\/)(story_sticker_interactions|story_activities|story_interactions)\//, reason: 'answers to polls, quizzes and questions in stories: not imported yet' },
  { pattern: /(^|\/)(events|fundraisers|gifts|guides|monetization|shopping|subscriptions|threads|avatars_store|meta_spark|reports|media_you've_seen|your_reels_sentiment|autofill_information|meta_verified|ai)\//, reason: 'not imported yet' },
  { pattern: /(^|\/)(content|media)\/(reels|archived_posts|igtv_videos|recently_deleted_content|other_content|profile_photos_\d+|live_videos)\.json$/, reason: 'not imported yet' },
  { pattern: /(^|\/)followers_and_following\/(blocked_profiles|close_friends|follow_requests_you've_received|hide_story_from|pending_follow_requests|recent_follow_requests|recently_unfollowed_profiles|removed_suggestions|restricted_profiles|profiles_you've_favorited|following_hashtags|custom_lists|your_friend_map)[^/]*\.json$/, reason: 'not imported yet' },
  { pattern: /(^|\/)saved\/saved_collections\.json$/, reason: 'saved collections: not imported yet' },
  { pattern: /(^|\/)messages\/(secret_conversations|reported_conversations|chats|ai_conversations|photos|message_requests_sent)[^/]*\.json$/, reason: 'not imported yet' }
]
