import { Type, type Static } from '@sinclair/typebox'
import { Uuid, Timestamp, StringEnum } from './common.js'

const Email = Type.String({ format: 'email', maxLength: 254 })
const Password = Type.String({ minLength: 8, maxLength: 1024 })
const Name = Type.String({ minLength: 1, maxLength: 200 })
export const OrgRoleSchema = StringEnum(['owner', 'admin', 'member'])
const AssignableRole = StringEnum(['admin', 'member'])

export const UserSchema = Type.Object({ id: Uuid, email: Type.String(), name: Type.String() })

export const SignupBody = Type.Object({
  email: Email,
  password: Password,
  name: Type.Optional(Name),
  organizationName: Type.Optional(Name)
}, { additionalProperties: false })
export type SignupBody = Static<typeof SignupBody>

export const SignupResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({ token: Type.String(), user: UserSchema, customerId: Uuid, workspaceId: Uuid })
})

export const LoginBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 254 }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
  cookie: Type.Optional(Type.Boolean({ description: 'true: the session token is set as the console\'s HttpOnly ' +
    'cookie instead of being returned (send `x-cairn-csrf: 1` too)' }))
}, { additionalProperties: false })
export type LoginBody = Static<typeof LoginBody>

export const LoginResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({
    token: Type.Optional(Type.String({ description: 'absent when the token was set as the console\'s cookie' })),
    expiresAt: Timestamp
  })
})

export const WorkspaceSummary = Type.Object({ id: Uuid, name: Type.String(), role: OrgRoleSchema })

export const MeResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({
    user: UserSchema,
    customerId: Uuid,
    orgRole: OrgRoleSchema,
    workspaces: Type.Array(WorkspaceSummary)
  })
})

export const CreateUserBody = Type.Object({
  email: Email,
  password: Password,
  name: Type.Optional(Name),
  role: Type.Optional(AssignableRole)
}, { additionalProperties: false })
export type CreateUserBody = Static<typeof CreateUserBody>

export const CreateUserResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({ id: Uuid, email: Type.String(), name: Type.String(), role: OrgRoleSchema })
})

export const CreateWorkspaceBody = Type.Object({ name: Name }, { additionalProperties: false })
export type CreateWorkspaceBody = Static<typeof CreateWorkspaceBody>

export const CreateWorkspaceResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({ id: Uuid, name: Type.String(), customer_id: Uuid, role: StringEnum(['owner']) })
})

export const ListWorkspacesResponse = Type.Object({ success: Type.Literal(true), data: Type.Array(WorkspaceSummary) })

export const AddMemberBody = Type.Object({ userId: Uuid, role: AssignableRole }, { additionalProperties: false })
export type AddMemberBody = Static<typeof AddMemberBody>

export const AddMemberResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({ workspace_id: Uuid, user_id: Uuid, role: OrgRoleSchema })
})

export const WorkspaceParams = Type.Object({ id: Uuid })
export const MemberParams = Type.Object({ id: Uuid, userId: Uuid })
