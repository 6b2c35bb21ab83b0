// The upstream's email one-time-code login (docs/protocol.md §4): `/auth/create-login {email}` mails a
// 6-digit code, `/auth/login {email, code}` answers `{success, token}`. The token goes straight
// into the credential store; callers only learn whether it worked and when it expires.
import { HearthError } from '../errors.js'
import { upstreamFailure, type UpstreamApi } from './api.js'
import type { CredentialStore, TokenInfo } from './credentials.js'

export interface LoginFlow {
  start (email: string): Promise<void>
  finish (email: string, code: string): Promise<TokenInfo>
}

export function checkEmail (email: unknown): string {
  if (typeof email !== 'string' || !/^[^\s@]+@[^\s@]+$/.test(email.trim()) || email.length > 320) {
    throw new HearthError('INVALID_ARGUMENT', 'an email address is required')
  }
  return email.trim()
}

export function createLoginFlow (deps: { api: UpstreamApi, credentials: CredentialStore }): LoginFlow {
  const { api, credentials } = deps
  return {
    async start (email) {
      const answer = await api.call('POST', '/auth/create-login', { email: checkEmail(email) }, { auth: false })
      const failure = upstreamFailure(answer, 'the conversation service refused to send a login code')
      if (failure !== null) throw failure
    },
    async finish (email, code) {
      const addr = checkEmail(email)
      if (typeof code !== 'string' || !/^\d{6}$/.test(code.trim())) throw new HearthError('INVALID_ARGUMENT', 'the login code is the 6 digits from the email')
      const answer = await api.call('POST', '/auth/login', { email: addr, code: code.trim() }, { auth: false })
      const failure = upstreamFailure(answer, 'login failed')
      if (failure !== null) throw failure
      const token = (answer.json as { token?: unknown }).token
      if (typeof token !== 'string') throw new HearthError('UPSTREAM_BAD_RESPONSE', 'the conversation service answered the login without a token')
      return await credentials.save(token, { email: addr })
    }
  }
}
