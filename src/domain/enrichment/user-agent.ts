import { isbot } from 'isbot';
import { LRUCache } from 'lru-cache';
import UAParser from 'ua-parser-js';
import type { SessionApp, SessionDevice, SessionOs } from '../../model/records.js';

/** What a User-Agent says: the device type, the operating system and the browser or app. */
export interface UserAgentInfo {
  type: SessionDevice['type'];
  os: SessionOs;
  app: SessionApp;
}

/**
 * Only the start of a User-Agent is read (the parser itself reads 500 characters): a long header
 * costs no more than a short one, and the cache holds short keys only.
 */
export const USER_AGENT_READ = 512;
/** Distinct User-Agents kept parsed. Anyone may send new ones, so the cache has a bound. */
export const USER_AGENT_CACHE = 2000;

const DESKTOP_OS =
  /^(windows|mac os|macos|linux|ubuntu|debian|fedora|red hat|suse|mint|arch|gentoo|centos|chrom(e|ium) os|freebsd|openbsd|netbsd|solaris|haiku)/i;

const NOTHING: UserAgentInfo = Object.freeze({
  type: 'other',
  os: Object.freeze({ name: null, version: null }),
  app: Object.freeze({ name: null, version: null, bot: false }),
});

function parse(text: string): UserAgentInfo {
  const result = new UAParser(text).getResult();
  const bot = isbot(text);
  const os = { name: result.os.name ?? null, version: result.os.version ?? null };
  const app = { name: result.browser.name ?? null, version: result.browser.version ?? null, bot };
  let type: SessionDevice['type'];
  if (bot) type = 'bot';
  else if (result.device.type === 'mobile' || result.device.type === 'tablet') type = result.device.type;
  else if (result.device.type === undefined && os.name !== null && DESKTOP_OS.test(os.name)) type = 'desktop';
  else type = 'other';
  return { type, os, app };
}

/** Parses User-Agents with ua-parser-js (device, OS, browser) and isbot (bots), remembering recent ones. */
export class UserAgents {
  private readonly cache: LRUCache<string, UserAgentInfo>;

  constructor(size = USER_AGENT_CACHE) {
    this.cache = new LRUCache({ max: size });
  }

  /** How many parsed User-Agents are kept now. */
  get cached(): number {
    return this.cache.size;
  }

  describe(userAgent: string | null | undefined): UserAgentInfo {
    if (!userAgent) return NOTHING;
    const text = userAgent.length > USER_AGENT_READ ? userAgent.slice(0, USER_AGENT_READ) : userAgent;
    let info = this.cache.get(text);
    if (info === undefined) {
      info = parse(text);
      this.cache.set(text, info);
    }
    return info;
  }
}
