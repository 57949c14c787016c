import { describe, expect, it } from 'vitest';
import {
  ApiClient,
  OPERATION_NAMES,
  OPERATIONS,
  operationPath,
  READ_OPERATIONS,
} from '../../../src/api/index.js';

describe('the operation table', () => {
  it('holds the 15 operations of the spec, each a method of the client, and the client calls no other', () => {
    expect(OPERATION_NAMES).toHaveLength(15);
    const methods = Object.getOwnPropertyNames(ApiClient.prototype).filter(
      (name) => name !== 'constructor' && name !== 'close',
    );
    expect(methods.sort()).toEqual([...OPERATION_NAMES].sort());
  });

  it('marks as reads exactly the GET operations: all a plan or a dry run may call', () => {
    const gets = OPERATION_NAMES.filter((name) => OPERATIONS[name].method === 'GET');
    expect([...READ_OPERATIONS].sort()).toEqual(gets.sort());
  });

  it('has every operation but list org users take the API key', () => {
    expect(OPERATION_NAMES.filter((name) => OPERATIONS[name].auth === 'bearer')).toEqual(['listOrgUsers']);
  });

  it('fills a path with its parameters URL-encoded, and names a parameter that is missing', () => {
    expect(operationPath('pauseWorkspace', { workgroupID: 'wg 1', workspaceID: 'ws/2' })).toBe(
      '/controller/v4/v2/workgroups/wg%201/workspaces/ws%2F2/pause',
    );
    expect(operationPath('listOrgUsers')).toBe('/users');
    expect(() => operationPath('deleteDatabase', { workgroupID: 'wg-1' })).toThrow(
      'deleteDatabase: path parameter databaseID is missing',
    );
  });
});
