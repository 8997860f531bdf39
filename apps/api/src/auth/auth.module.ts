import { Module } from '@nestjs/common';
import { WEFT_CONFIG, type WeftConfig } from '@weft/platform';
import { AuthService } from './auth.service.js';
import { KEY_REVOCATIONS, RedisKeyRevocations } from './key-revocations.js';
import { RolesGuard } from './roles.guard.js';

/**
 * API-key authentication; its TenantRepository and WEFT_CONFIG come from the global CoreModule.
 * KEY_REVOCATIONS, the broadcast of revoked keys between API processes, is Redis at
 * WEFT_CONFIG.redisUrl (override it to test without Redis).
 */
@Module({
  providers: [
    AuthService,
    RolesGuard,
    { provide: KEY_REVOCATIONS, inject: [WEFT_CONFIG], useFactory: (config: WeftConfig) => new RedisKeyRevocations(config.redisUrl) },
  ],
  exports: [AuthService, RolesGuard],
})
export class AuthModule {}
