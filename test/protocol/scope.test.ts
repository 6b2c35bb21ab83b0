import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isHearthError } from '../../src/errors.js'
import { assertScope, MAX_SCOPE_LENGTH, parseScope, scopeProblem } from '../../src/protocol/scope.js'

const VALID = [
  'instagram.profile',
  'instagram.posts',
  'chatgpt.conversations',
  'spotify.savedTracks',
  'youtube.watchLater',
  'github.profile.repos',
  'x.y',
  '0.1',
  'a_b.c_d.e_f',
  'linkedin.profile.workExperience',
  'source9.Category.SUB_2',
  'a.' + 'b'.repeat(MAX_SCOPE_LENGTH - 2)
]

const INVALID: Array<[unknown, string]> = [
  ['Instagram.profile', 'segment 1 (source) must match ^[a-z0-9][a-z0-9_]*$'],
  ['instaGram.profile', 'segment 1 (source) must match ^[a-z0-9][a-z0-9_]*$'],
  ['instagram', 'has 1 segment; a scope has 2 or 3'],
  ['a.b.c.d', 'has 4 segments; a scope has 2 or 3'],
  ['', 'is empty'],
  ['instagram.', 'segment 2 (category) is empty'],
  ['.profile', 'segment 1 (source) is empty'],
  ['instagram..profile', 'segment 2 (category) is empty'],
  ['..', 'segment 1 (source) is empty'],
  ['instagram/profile.x', 'segment 1 (source) must match ^[a-z0-9][a-z0-9_]*$'],
  ['instagram.pro/file', 'segment 2 (category) must match ^[a-zA-Z0-9][a-zA-Z0-9_]*$'],
  ['%2e%2e.profile', 'segment 1 (source) must match ^[a-z0-9][a-z0-9_]*$'],
  ['instagram.%2e%2e', 'segment 2 (category) must match ^[a-zA-Z0-9][a-zA-Z0-9_]*$'],
  ['instagram.prøfile', 'segment 2 (category) must match ^[a-zA-Z0-9][a-zA-Z0-9_]*$'],
  ['ínstagram.profile', 'segment 1 (source) must match ^[a-z0-9][a-z0-9_]*$'],
  ['_instagram.profile', 'segment 1 (source) must match ^[a-z0-9][a-z0-9_]*$'],
  ['instagram._profile', 'segment 2 (category) must match ^[a-zA-Z0-9][a-zA-Z0-9_]*$'],
  ['instagram.profile._x', 'segment 3 (subcategory) must match ^[a-zA-Z0-9][a-zA-Z0-9_]*$'],
  ['instagram-x.profile', 'segment 1 (source) must match ^[a-z0-9][a-z0-9_]*$'],
  [' instagram.profile', 'segment 1 (source) must match ^[a-z0-9][a-z0-9_]*$'],
  ['instagram.profile ', 'segment 2 (category) must match ^[a-zA-Z0-9][a-zA-Z0-9_]*$'],
  ['instagram.profile\n', 'segment 2 (category) must match ^[a-zA-Z0-9][a-zA-Z0-9_]*$'],
  ['a.' + 'b'.repeat(MAX_SCOPE_LENGTH - 1), `longer than 128 characters (${MAX_SCOPE_LENGTH + 1})`],
  ['a.' + 'b'.repeat(500), 'longer than 128 characters (502)'],
  [42, 'must be a string, got number'],
  [null, 'must be a string, got null'],
  [undefined, 'must be a string, got undefined'],
  [['instagram', 'profile'], 'must be a string, got array'],
  [{ scope: 'instagram.profile' }, 'must be a string, got object']
]

test('valid scopes, including camelCase tails, are accepted unchanged', () => {
  for (const s of VALID) {
    assert.equal(scopeProblem(s), null, s)
    assert.equal(assertScope(s), s)
  }
})

test('invalid scopes are rejected with a precise reason', () => {
  for (const [s, reason] of INVALID) {
    assert.equal(scopeProblem(s), reason, JSON.stringify(s))
    assert.throws(() => assertScope(s), (err: unknown) => {
      assert.ok(isHearthError(err, 'INVALID_SCOPE'))
      assert.equal(err.status, 400)
      assert.equal(err.details?.reason, reason)
      assert.equal(err.details?.scope, typeof s === 'string' ? s : null)
      assert.ok(err.message.includes(reason))
      return true
    })
  }
})

test('parseScope splits into source, category and optional subcategory without changing case', () => {
  assert.deepEqual(parseScope('instagram.profile'), { source: 'instagram', category: 'profile' })
  assert.deepEqual(parseScope('spotify.savedTracks'), { source: 'spotify', category: 'savedTracks' })
  assert.deepEqual(parseScope('youtube.history.watchLater'), { source: 'youtube', category: 'history', subcategory: 'watchLater' })
  assert.equal('subcategory' in parseScope('x.y'), false)
  assert.throws(() => parseScope('a.b.c.d'), (err: unknown) => isHearthError(err, 'INVALID_SCOPE'))
})

test('a scope just found valid (remembered for the checks that follow) never makes another string pass', () => {
  assert.notEqual(scopeProblem(''), null, 'the empty string, before any scope was checked')
  assert.equal(scopeProblem('instagram.profile'), null)
  assert.equal(scopeProblem('instagram.profile'), null, 'the same scope again')
  for (const bad of ['', 'instagram', 'instagram.profile.', 'Instagram.profile', 'instagram.profile ', 'instagram..profile']) {
    assert.notEqual(scopeProblem(bad), null, bad)
    assert.equal(scopeProblem('instagram.profile'), null)
  }
  assert.equal(scopeProblem(new String('instagram.profile')), 'must be a string, got object')
})
