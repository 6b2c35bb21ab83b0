// @ts-check
// Google Takeout's "My Activity" HTML (watch-history.html, search-history.html), read as it
// streams: one activity per outer cell, memory bounded by one activity.
//   <div class="outer-cell …">
//     <div class="header-cell …"><p class="mdl-typography--title">YouTube<br></p></div>
//     <div class="content-cell … mdl-typography--body-1">Watched&nbsp;<a href="…watch?v=…">Title</a><br>
//       <a href="…/channel/…">Channel</a><br>Jan 1, 2024, 12:00:00 PM CET<br></div>
//     <div class="content-cell … mdl-typography--body-1 mdl-typography--text-right"></div>
//     <div class="content-cell … mdl-typography--caption"><b>Products:</b><br>&emsp;YouTube<br>
//       <b>Details:</b><br>&emsp;From Google Ads<br><b>Why is this here?</b><br>…</div>
//   </div>
import { Parser } from 'htmlparser2'

/**
 * @typedef {{text: string, href?: string}} Segment
 * @typedef {{header: string, lines: Segment[][], products: string[], details: string[]}} HtmlActivity
 */

/**
 * @param {AsyncIterable<Uint8Array>} chunks
 * @returns {AsyncGenerator<HtmlActivity>}
 */
export async function * activitiesFromHtml (chunks) {
  /** @type {HtmlActivity[]} */
  const ready = []
  /** @type {{header: string[], body: Segment[][], caption: Segment[][], bodySeen: boolean} | null} */
  let cur = null
  /** @type {string[]} */
  const stack = []
  /** @type {string | undefined} */
  let href
  const section = () => {
    for (let i = stack.length - 1; i >= 0; i--) if (stack[i] !== 'other') return stack[i]
    return undefined
  }
  /** @param {string} text */
  const addText = (text) => {
    if (cur === null) return
    const where = section()
    if (where === 'header') cur.header.push(text)
    else if (where === 'body' || where === 'caption') {
      const lines = where === 'body' ? cur.body : cur.caption
      const line = /** @type {Segment[]} */ (lines.at(-1))
      const last = line.at(-1)
      if (last !== undefined && last.href === href) last.text += text
      else line.push(href !== undefined ? { text, href } : { text })
    }
  }
  const parser = new Parser({
    onopentag (name, attribs) {
      if (name === 'div') {
        const cls = ` ${attribs.class ?? ''} `
        if (cls.includes(' outer-cell ')) {
          cur = { header: [], body: [[]], caption: [[]], bodySeen: false }
          stack.length = 0
          stack.push('outer')
        } else if (cur === null) stack.push('other')
        else if (cls.includes(' header-cell ')) stack.push('header')
        else if (cls.includes(' content-cell ') && cls.includes(' mdl-typography--caption ')) stack.push('caption')
        else if (cls.includes(' content-cell ') && cls.includes(' mdl-typography--body-1 ') && !cls.includes(' mdl-typography--text-right ') && !cur.bodySeen) {
          cur.bodySeen = true
          stack.push('body')
        } else stack.push('other')
      } else if (name === 'br' && cur !== null) {
        const where = section()
        if (where === 'body') cur.body.push([])
        else if (where === 'caption') cur.caption.push([])
      } else if (name === 'a') href = attribs.href
    },
    ontext: addText,
    onclosetag (name) {
      if (name === 'a') href = undefined
      if (name !== 'div') return
      const closed = stack.pop()
      if (closed === 'outer' && cur !== null) {
        ready.push(finish(cur))
        cur = null
      }
    }
  }, { decodeEntities: true })
  const decoder = new TextDecoder('utf-8')
  for await (const chunk of chunks) {
    parser.write(decoder.decode(chunk, { stream: true }))
    for (const a of ready.splice(0)) yield a
  }
  parser.write(decoder.decode())
  parser.end()
  for (const a of ready.splice(0)) yield a
}

/** @param {{header: string[], body: Segment[][], caption: Segment[][]}} cur @returns {HtmlActivity} */
function finish (cur) {
  const clean = (/** @type {string} */ s) => s.replace(/[\u00a0\u2003\u202f]/g, ' ').replace(/\s+/g, ' ').trim()
  const lines = cur.body.map((l) => l.map((s) => ({ ...s, text: clean(s.text) })).filter((s) => s.text !== '' || s.href !== undefined)).filter((l) => l.length > 0)
  /** @type {Record<string, string[]>} */
  const labelled = {}
  let label = ''
  for (const line of cur.caption) {
    const text = clean(line.map((s) => s.text).join(''))
    if (text === '') continue
    // Labels are bold lines: "Products:", "Details:", "Why is this here?"
    if (/[:?]$/.test(text)) { label = text.slice(0, -1).toLowerCase(); labelled[label] = []; continue }
    labelled[label]?.push(text)
  }
  return { header: clean(cur.header.join('')), lines, products: labelled.products ?? [], details: labelled.details ?? [] }
}

const MONTHS = { jan: 0, feb: 1, mar: 2, apr: 3, may: 4, jun: 5, jul: 6, aug: 7, sep: 8, sept: 8, oct: 9, nov: 10, dec: 11 }

/** Offsets in minutes of the zone abbreviations Takeout prints. Ambiguous ones take the common reading (CST: US Central, IST: India). */
const ZONES = {
  UTC: 0, GMT: 0, Z: 0, WET: 0, WEST: 60, BST: 60, IST: 330, CET: 60, CEST: 120, MET: 60, MEST: 120, EET: 120, EEST: 180, MSK: 180,
  EST: -300, EDT: -240, CST: -360, CDT: -300, MST: -420, MDT: -360, PST: -480, PDT: -420, AKST: -540, AKDT: -480, HST: -600,
  AST: -240, ADT: -180, NST: -210, NDT: -150, BRT: -180, ART: -180, JST: 540, KST: 540, HKT: 480, SGT: 480, AWST: 480,
  ACST: 570, ACDT: 630, AEST: 600, AEDT: 660, NZST: 720, NZDT: 780
}

/**
 * "Jan 1, 2024, 12:00:00 PM CET" (US English) or "1 Jan 2024, 12:00:00 CET" (UK English), with
 * "GMT+02:00"-style zones too → ISO 8601 UTC, or undefined when the text or its zone is unknown.
 * @param {string} text
 * @returns {string | undefined}
 */
export function takeoutTime (text) {
  const t = text.replace(/[\u00a0\u202f]/g, ' ').trim()
  const us = /^([A-Za-z]{3,4})\.? (\d{1,2}), (\d{4}),? (\d{1,2}):(\d{2}):(\d{2}) ?([AP]M) (.+)$/i.exec(t)
  const uk = /^(\d{1,2}) ([A-Za-z]{3,4})\.? (\d{4}),? (\d{1,2}):(\d{2}):(\d{2}) (.+)$/.exec(t)
  let y, mo, d, h, mi, s, zone
  if (us !== null) {
    mo = MONTHS[/** @type {keyof typeof MONTHS} */ (us[1]?.toLowerCase())]
    ;[d, y, h, mi, s] = [us[2], us[3], us[4], us[5], us[6]].map(Number)
    h = (/** @type {number} */ (h) % 12) + (us[7]?.toUpperCase() === 'PM' ? 12 : 0)
    zone = us[8]
  } else if (uk !== null) {
    mo = MONTHS[/** @type {keyof typeof MONTHS} */ (uk[2]?.toLowerCase())]
    ;[d, y, h, mi, s] = [uk[1], uk[3], uk[4], uk[5], uk[6]].map(Number)
    zone = uk[7]
  } else return undefined
  if (mo === undefined || zone === undefined) return undefined
  const offset = zoneOffset(zone.trim())
  if (offset === undefined) return undefined
  const ms = Date.UTC(/** @type {number} */ (y), mo, d, h, mi, s) - offset * 60_000
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString().replace('.000Z', 'Z')
}

/** @param {string} zone @returns {number | undefined} minutes east of UTC */
function zoneOffset (zone) {
  const named = ZONES[/** @type {keyof typeof ZONES} */ (zone.toUpperCase())]
  if (named !== undefined) return named
  const m = /^(?:GMT|UTC)([+-])(\d{1,2})(?::?(\d{2}))?$/i.exec(zone)
  if (m === null) return undefined
  return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0))
}
