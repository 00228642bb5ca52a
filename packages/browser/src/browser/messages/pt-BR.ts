/**
 * The Brazilian Portuguese messages (`pt-BR`), importable on their own
 * (`@front-proxy/browser/messages/pt-BR`), so that a page bundles only the table it speaks:
 * `createProxyClient({ messages: ptBR })` from `@front-proxy/browser/core`.
 *
 * @module
 */
import type { LocaleMessages } from '../messages.js';

/** The Brazilian Portuguese table (`pt-BR`, the SDK's default locale). */
export const ptBR: LocaleMessages = {
  locale: 'pt-BR',
  errors: {
    EM0001: {
      message: 'Sua sessão foi encerrada. Faça login novamente.',
      preAuthMessage: 'Falta algo de que esta etapa precisa. Comece de novo.',
    },
    EM0002: {
      message: 'Sua sessão não é válida. Faça login novamente.',
      preAuthMessage: 'Os dados informados não são válidos. Confira e tente novamente.',
    },
    EM0003: {
      message: 'Sua sessão expirou. Faça login novamente.',
      preAuthMessage: 'O código ou link expirou. Comece de novo para receber um novo.',
    },
    EM0004: {
      message: 'Seu acesso foi revogado. Faça login novamente.',
      preAuthMessage: 'Esta conta não pode entrar. Fale com o suporte.',
    },
    EM0005: {
      message: 'Sua sessão não é mais válida. Faça login novamente.',
      preAuthMessage: 'Os dados informados não foram aceitos. Confira e tente novamente.',
    },
    EM0006: {
      message: 'Notamos um acesso de outro endereço IP. Faça login novamente.',
      preAuthMessage: 'Notamos uma solicitação de outro endereço IP. Tente novamente.',
    },
    EM0007: {
      message: 'Notamos um acesso de outro dispositivo. Faça login novamente.',
      preAuthMessage: 'Notamos uma solicitação de outro dispositivo. Tente novamente.',
    },
    EM0008: {
      message: 'Notamos um acesso de outra localização. Faça login novamente.',
      preAuthMessage: 'Notamos uma solicitação de outra localização. Tente novamente.',
    },
    EM0009: {
      message: 'É necessária uma verificação de segurança. Faça login novamente para continuar.',
      preAuthMessage: 'É necessária uma verificação de segurança antes de continuar.',
    },
    EM0010: {
      message: 'Sua sessão é de uma versão antiga do site. Faça login novamente.',
      preAuthMessage: 'Esta página é de uma versão antiga do site. Recarregue-a e tente novamente.',
    },
    EM0012: { message: 'Sua conta está bloqueada. Fale com o suporte.' },
    EM0013: {
      message: 'Ocorreu um erro de segurança ao validar sua sessão. Faça login novamente.',
      preAuthMessage: 'Ocorreu um erro de segurança ao verificar seus dados. Tente novamente.',
    },
    EM0014: {
      message: 'Sua sessão não passou na validação de segurança. Faça login novamente.',
      preAuthMessage: 'Seus dados não passaram na validação de segurança. Tente novamente.',
    },
    EM0011: { message: 'Você não tem permissão para acessar isto.' },
    EM0021: { message: 'Muitas tentativas em pouco tempo. Aguarde um momento e tente novamente.' },
    EM0022: { message: 'Houve um conflito ao processar sua solicitação. Tente novamente.' },
    EM0031: { message: 'Algo deu errado do nosso lado. Tente novamente mais tarde.' },
    EM0032: { message: 'O serviço está temporariamente indisponível. Tente novamente em instantes.' },
    EM0041: { message: 'Sua sessão de jogo atingiu o limite de tempo.' },
    EM0042: { message: 'Ocorreu uma falha de rede. Verifique sua conexão e tente novamente.' },
    EM0099: { message: 'Algo deu errado. Tente novamente.' },
  },
  forms: {
    invalid_data: 'Alguns dados estão faltando ou não são válidos. Confira e tente novamente.',
    invalid_credentials: 'Login ou senha incorretos.',
    access_denied: 'Esta ação não é permitida para esta conta.',
    not_found: 'Não encontramos uma conta com esses dados.',
    conflict: 'Esses dados já estão em uso.',
    account_locked: 'Esta conta está bloqueada. Fale com o suporte.',
    too_many_attempts: 'Muitas tentativas. Aguarde um momento e tente novamente.',
    request_failed: 'Não foi possível concluir a solicitação. Tente novamente.',
    upstream_error: 'Algo deu errado do nosso lado. Tente novamente mais tarde.',
    invalid_request: 'Alguns campos estão faltando ou em formato inválido. Confira e tente novamente.',
  },
  fallback: 'A solicitação falhou.',
};
