/**
 * The three worked examples of docs/profiles.md, run as the page gives them: a sign-up's email becomes
 * an identity and a trait (and a second device merges), purchases add up to
 * traits.public.lifetime_value, and a newsletter-consent event sets consents.newsletter.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startService, type Service } from '../helpers.js';
import { expectStatus, type Json } from './support.js';

describe('the worked examples of docs/profiles.md', () => {
  let service: Service;
  before(async () => {
    service = await startService();
    await service.createSource({ id: 'web' });
  });
  after(() => service.close());

  const rule = async (body: Json) => expectStatus(await service.manage('POST', '/profile-rule', body), 200);
  const track = async (session: string, events: Json[], extra: Json = {}) =>
    expectStatus(
      await service.post('/track', { source: { id: 'web' }, session: { id: session }, events, ...extra }),
      200,
    );
  const profile = async (id: string) => expectStatus(await service.get(`/profile/${id}`), 200);

  test('1: an email from a sign-up form becomes an identity and a trait; a second device merges', async () => {
    await rule({
      id: 'sign-up',
      name: 'Sign-up form',
      event_type: 'sign-up',
      operations: [
        { op: 'identify', type: 'email', from: 'properties.email' },
        { op: 'set', path: 'traits.private.email', from: 'properties.email' },
        { op: 'set', path: 'traits.public.plan', from: 'properties.plan' },
        { op: 'add_segment', value: 'registered' },
      ],
    });
    const laptop = await track('laptop-session', [
      { type: 'sign-up', properties: { email: ' Ana@Example.com ', plan: 'free' } },
    ]);
    const stored = await profile(laptop.profile.id);
    assert.deepEqual(stored.traits, { public: { plan: 'free' }, private: { email: ' Ana@Example.com ' } });
    assert.deepEqual(stored.segments, ['registered']);
    assert.deepEqual(stored.ids, [{ type: 'email', value: 'ana@example.com' }]);
    const found = expectStatus(await service.get('/profiles?identity=email:ANA@example.com'), 200);
    assert.deepEqual(
      found.result.map((p: Json) => p.id),
      [laptop.profile.id],
    );

    const phone = await track('phone-session', [{ type: 'page-view' }]);
    const signedIn = await track('phone-session', [
      { type: 'sign-up', properties: { email: 'ana@example.com', plan: 'pro' } },
    ]);
    assert.equal(signedIn.profile.id, laptop.profile.id);
    const merged = await profile(phone.profile.id);
    assert.equal(merged.id, laptop.profile.id);
    assert.equal(merged.stats.visits, 2);
    assert.equal(merged.traits.public.plan, 'free', "the laptop's trait wins");
  });

  test('2: purchases add up to traits.public.lifetime_value', async () => {
    expectStatus(
      await service.manage('POST', '/event/management', {
        event_type: 'purchase',
        validation: {
          json_schema: {
            'event@properties': {
              type: 'object',
              properties: { price: { type: 'number', minimum: 0 } },
              required: ['price'],
            },
          },
        },
      }),
      200,
    );
    await rule({
      id: 'purchases',
      name: 'Purchases add up',
      event_type: 'purchase',
      operations: [
        { op: 'increment', path: 'traits.public.lifetime_value', from: 'properties.price' },
        { op: 'increment', path: 'traits.public.orders' },
        { op: 'set_once', path: 'traits.public.first_order', from: 'properties.order' },
        { op: 'set', path: 'traits.public.last_order', from: 'properties.order' },
        { op: 'add_segment', value: 'customers' },
      ],
    });
    const first = await track('buyer', [{ type: 'purchase', properties: { order: 'A-1001', price: 13.45 } }]);
    const refused = await service.post('/track', {
      source: { id: 'web' },
      session: { id: 'buyer' },
      events: [{ type: 'purchase', properties: { order: 'A-bad', price: 'free' } }],
    });
    assert.equal(refused.statusCode, 406);
    await track('buyer', [{ type: 'purchase', properties: { order: 'A-1002', price: 20 } }]);
    const stored = await profile(first.profile.id);
    assert.deepEqual(stored.traits.public, {
      lifetime_value: 33.45,
      orders: 2,
      first_order: 'A-1001',
      last_order: 'A-1002',
    });
    assert.deepEqual(stored.segments, ['customers']);

    // The profile@ check of the page: a purchase taking the value past 100,000 is refused.
    expectStatus(
      await service.manage('POST', '/event/management', {
        event_type: 'purchase',
        validation: {
          json_schema: {
            'profile@traits.public.lifetime_value': { type: 'number', maximum: 100_000 },
          },
        },
      }),
      200,
    );
    const tooMuch = await service.post('/track', {
      source: { id: 'web' },
      session: { id: 'buyer' },
      events: [{ type: 'purchase', properties: { order: 'A-1003', price: 100_000 } }],
    });
    assert.equal(tooMuch.statusCode, 406);
    assert.equal((await profile(first.profile.id)).traits.public.orders, 2);
  });

  test('3: a newsletter-consent event sets consents.newsletter; the latest choice stands', async () => {
    await rule({
      id: 'newsletter-consent',
      name: 'Newsletter consent',
      event_type: 'newsletter-consent',
      operations: [
        { op: 'set', path: 'consents.newsletter', from: 'properties.granted' },
        { op: 'set', path: 'traits.public.newsletter_consent_page', from: 'context.page.url' },
      ],
    });
    await rule({
      id: 'newsletter-withdraw',
      event_type: 'newsletter-withdraw',
      operations: [{ op: 'unset', path: 'consents.newsletter' }],
    });
    const page = { context: { page: { url: 'https://shop.example/' } } };
    const answer = await track(
      'reader',
      [{ type: 'newsletter-consent', properties: { granted: true } }],
      page,
    );
    const id = answer.profile.id as string;
    assert.deepEqual((await profile(id)).consents, { newsletter: true });
    assert.equal((await profile(id)).traits.public.newsletter_consent_page, 'https://shop.example/');
    await track('reader', [{ type: 'newsletter-consent', properties: { granted: false } }]);
    assert.deepEqual((await profile(id)).consents, { newsletter: false });
    await track('reader', [{ type: 'newsletter-withdraw' }]);
    assert.deepEqual((await profile(id)).consents, {});
  });
});
