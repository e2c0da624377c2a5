import { PostgresStore } from '../../src/storage/postgres/store.js';
import { testSchema, usePostgres } from '../support/postgres.js';
import { storeContract } from './contract.js';

usePostgres();

storeContract('postgres', async ({ writeQueueLimit }) => {
  const url = await testSchema();
  const make = () => new PostgresStore({ url, writeQueueLimit });
  return { store: make(), again: make };
});
